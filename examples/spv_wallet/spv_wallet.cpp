// bloomery-spv: what a Bitcoin full node does with a light client's BIP37 filter. Given the
// client's `filterload` body, it reads raw transactions (hex, one per line) and applies the BIP's
// matching rules to each, as a node deciding what to relay, updating the filter as its nFlags
// say; or, with --simulate, it measures on a synthetic chain what a filter saves a light client in
// bytes downloaded, and what it costs in false matches, at several false-positive rates.
//
//   bloomery-spv --filter HEX < transactions.hex   "match TXID" or "miss TXID" per transaction
//   bloomery-spv --simulate [--blocks B] [--block-txs T] [--wallet-keys K] [--seed S] [--json]
#include <bloomery/bip37.hpp>
#include <bloomery/examples/harness.hpp>
#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "chain.hpp"
#include "matching.hpp"
#include "transaction.hpp"

namespace {

namespace ex = bloomery::examples;
using bloomery::bip37_filter;
using bytes = std::vector<std::uint8_t>;

bip37_filter parse_filter(const std::string& hex) {
  try {
    return bip37_filter::deserialize(spv::from_hex(hex));
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (why.starts_with("bloomery: ")) why.erase(0, 10);
    throw std::invalid_argument("--filter: " + why);
  }
}

// The node's side: every transaction of standard input against the filter, in order.
int scan(bip37_filter filter) {
  std::string line;
  for (std::uint64_t number = 1; std::getline(std::cin, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    try {
      const bytes raw = spv::from_hex(line);
      const spv::transaction tx = spv::parse_transaction(raw);
      const bool match = spv::is_relevant_and_update(filter, tx);
      std::printf("%s %s\n", match ? "match" : "miss", spv::to_hex(tx.txid, true).c_str());
    } catch (const std::exception& e) {
      throw std::runtime_error("line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (std::cin.bad()) throw std::runtime_error("read error on standard input");
  return 0;
}

// --- the simulation -----------------------------------------------------------------------------

struct sim_options {
  std::uint64_t blocks = 100, block_txs = 1000, wallet_keys = 20;
  double wallet_share = 0.002;  // chance that a transaction pays the wallet, and that it spends
};

int simulate(const sim_options& o, const ex::common_options& c) {
  std::uint64_t state = c.seed;
  const spv::wallet w(o.wallet_keys, state);
  const std::vector<double> rates = {0.1, 0.01, 0.001, 0.0001};
  struct column {
    bip37_filter filter;
    std::uint64_t bytes = 0, received = 0, found = 0, false_matches = 0;
  };
  std::vector<column> cols;
  for (const double p : rates) {
    bip37_filter f({.capacity = 2 * o.wallet_keys, .fpr = p},
                   static_cast<std::uint32_t>(bloomery::support::splitmix64(state)));
    for (std::uint64_t i = 0; i < o.wallet_keys; ++i) {
      f.insert(w.pubkeys[i]);
      f.insert(w.hashes[i]);
    }
    cols.push_back({f});
  }
  std::uint64_t full_bytes = 0, wallet_txs = 0;
  std::vector<std::vector<bool>> matched(cols.size(), std::vector<bool>(o.block_txs));
  for (std::uint64_t b = 0; b < o.blocks; ++b) {
    full_bytes += 80 + spv::compact_size_bytes(o.block_txs);
    for (std::uint64_t t = 0; t < o.block_txs; ++t) {
      const bool pay = ex::uniform01(state) < o.wallet_share;
      const bool spend = ex::uniform01(state) < o.wallet_share;
      const bytes raw = spv::make_tx(state, w, pay, spend);
      const spv::transaction tx = spv::parse_transaction(raw);
      full_bytes += raw.size();
      wallet_txs += pay || spend;
      for (std::size_t i = 0; i < cols.size(); ++i) {
        const bool hit = spv::is_relevant_and_update(cols[i].filter, tx);
        matched[i][t] = hit;
        cols[i].bytes += hit ? raw.size() : 0;
        cols[i].received += hit;
        cols[i].found += hit && (pay || spend);
        cols[i].false_matches += hit && !(pay || spend);
      }
    }
    for (std::size_t i = 0; i < cols.size(); ++i)
      cols[i].bytes += spv::merkleblock_bytes(matched[i]);
  }

  const std::uint64_t txs = o.blocks * o.block_txs, others = txs - wallet_txs;
  std::vector<std::string> names = {"full blocks"};
  for (const double p : rates) names.push_back(bloomery::support::fmt("fpr %g%%", p * 100));
  ex::report r("bloomery-spv --simulate", names);
  r.param("blocks", ex::count(o.blocks));
  r.param("transactions", ex::count(txs));
  r.param("wallet keys", ex::count(o.wallet_keys));
  r.param("wallet transactions", ex::count(wallet_txs));
  const auto row = [&](const char* key, const char* label, ex::cell full, auto per_filter) {
    std::vector<ex::cell> cells = {std::move(full)};
    for (const column& col : cols) cells.push_back(per_filter(col));
    r.row(key, label, std::move(cells));
  };
  row("filter_bytes", "filterload message body", ex::none(),
      [](const column& col) { return ex::bytes(col.filter.serialize().size()); });
  row("hash_funcs", "hash functions", ex::none(),
      [](const column& col) { return ex::count(col.filter.hash_funcs()); });
  row("downloaded_bytes", "bytes downloaded", ex::bytes(full_bytes),
      [](const column& col) { return ex::bytes(col.bytes); });
  row("downloaded_share", "share of whole blocks", ex::percent(1.0, 2), [&](const column& col) {
    return ex::percent(static_cast<double>(col.bytes) / static_cast<double>(full_bytes), 2);
  });
  row("transactions_received", "transactions received", ex::count(txs),
      [](const column& col) { return ex::count(col.received); });
  row("wallet_transactions_found", "wallet transactions found", ex::count(wallet_txs),
      [](const column& col) { return ex::count(col.found); });
  row("false_matches", "false matches", ex::count(others),
      [](const column& col) { return ex::count(col.false_matches); });
  row("false_match_rate", "false matches per other transaction", ex::percent(1.0, 2),
      [&](const column& col) {
        return ex::percent(static_cast<double>(col.false_matches) / static_cast<double>(others), 2);
      });
  r.note(
      "Downloaded: headers, partial Merkle trees and the matched transactions (merkleblock, tx).");
  r.note(
      "Each transaction tests about 9 elements: it matches falsely several times as often as one.");
  r.note("False matches cost bytes, and hide the wallet's own transactions from the node.");
  r.print(c.json);
  const bool complete = std::all_of(cols.begin(), cols.end(),
                                    [&](const column& col) { return col.found == wallet_txs; });
  if (!complete) std::fprintf(stderr, "bloomery-spv: a wallet transaction was missed\n");
  return complete ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Apply a BIP37 filter to Bitcoin transactions as a full node does, or simulate a "
      "light client's savings",
      "bloomery-spv"};
  std::string filter;
  bool simulation = false;
  sim_options sim;
  ex::common_options common;
  CLI::Option* filter_opt = app.add_option(
      "--filter", filter, "the client's filterload body as hex; transactions as hex on stdin");
  app.add_flag("--simulate", simulation, "measure a light client's downloads on a synthetic chain")
      ->excludes(filter_opt);
  app.add_option("--blocks", sim.blocks, "--simulate: blocks")->check(CLI::Range(1, 100'000));
  app.add_option("--block-txs", sim.block_txs, "--simulate: transactions per block")
      ->check(CLI::Range(1, 100'000));
  app.add_option("--wallet-keys", sim.wallet_keys, "--simulate: the wallet's keys")
      ->check(CLI::Range(1, 10'000));
  ex::add_common_options(app, common);
  app.footer(
      "Examples:\n"
      "  bloomery-spv --filter 03614e9b050000000000000001 < transactions.hex\n"
      "  bloomery-spv --simulate --blocks 100 --json");
  return ex::run_example(app, argc, argv, [&] {
    if (simulation) return simulate(sim, common);
    if (filter_opt->count() == 0) {
      throw std::invalid_argument(
          "give --filter HEX (transactions on standard input) or --simulate");
    }
    if (common.json) throw std::invalid_argument("--json goes with --simulate");
    return scan(parse_filter(filter));
  });
}
