// DuckDB's side of bench/parquet/run.sh: writes the benchmark's Parquet file (`write FILE`), or
// probes keys against a column's Bloom filters with parquet_bloom_probe, round after round in one
// process (`probe FILE COLUMN KEYFILE ROUNDS`), printing per round the nanoseconds per key and
// the number of (key, row group) pairs the filters did not exclude. Keys go 200 to a query
// (UNION ALL of parquet_bloom_probe calls: the function takes one value per call). Runs with the
// @duckdb/node-api package that tests/parquet installs (NODE_PATH or a copy beside it).
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const [mode, file, column, keyFile, roundsText] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await instance.connect();
const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const quote = (s) => `'${String(s).replaceAll("'", "''")}'`;

if (mode === 'write') {
  // 10 row groups of 100,000 rows; user_id repeats (so its chunks are dictionary-encoded and get
  // filters), 2,000 distinct ids per row group.
  await rows(`COPY (SELECT (i // 100000) * 1000000 + (i * 7919) % 2000 AS user_id
                    FROM range(1000000) t(i))
              TO ${quote(file)} (FORMAT parquet, ROW_GROUP_SIZE 100000)`);
} else {
  const keys = readFileSync(keyFile, 'utf8').split('\n').filter((k) => k.length > 0);
  for (let r = 0; r < Number(roundsText); r++) {
    const start = process.hrtime.bigint();
    let maybe = 0;
    for (let i = 0; i < keys.length; i += 200) {
      const sql = keys.slice(i, i + 200).map((k) =>
        `SELECT bloom_filter_excludes FROM parquet_bloom_probe(${quote(file)}, ${quote(column)}, ` +
        `CAST(${k} AS BIGINT))`).join(' UNION ALL ');
      for (const row of await rows(sql)) if (!row.bloom_filter_excludes) maybe++;
    }
    const ns = Number(process.hrtime.bigint() - start) / keys.length;
    console.log(`${ns.toFixed(1)} ${maybe}`);
  }
}
con.closeSync();
instance.closeSync();
