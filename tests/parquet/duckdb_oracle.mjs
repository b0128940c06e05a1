// DuckDB (through @duckdb/node-api) as the oracle for bloomery's Parquet Bloom filter reader:
// tests/parquet/test_parquet.py runs it, README.md beside this file says how. One process per
// mode, one in-memory DuckDB with one thread (so the files it writes are the same every time).
//
//   write OUTDIR                       writes the test files (types, sizes, fpp) and
//                                      OUTDIR/manifest.json
//   golden OUTDIR                      writes the small golden set of tests/data/parquet: two
//                                      files and expected.json
//   probe FILE COLUMN KEYS_JSON OUT    parquet_bloom_probe of one column for every key
//   probe-batch JOBS_JSON OUT          the same for a list of {file, column, keys} in one process
//
// Keys are JSON strings, each cast by DuckDB to the column's type (CAST('0.1' AS DOUBLE) is the
// nearest double); a probe writes, per key, one bloom_filter_excludes per row group, or null and
// DuckDB's error when the key does not cast.
//
// DuckDB 1.5.6 facts the files are built around (checked when this was written):
// - it writes a split-block Bloom filter for a column chunk only when that chunk is dictionary
//   encoded: never for BOOLEAN, nor for a chunk of (nearly) unique values, nor for an all-NULL
//   chunk; each filter is sized for the chunk's distinct values (BLOOM_FILTER_FALSE_POSITIVE_RATIO,
//   0.01 by default) to a power of two bytes, at least 32;
// - parquet_bloom_probe(file, column, value) gives bloom_filter_excludes = false for a chunk
//   without a filter; it takes top-level columns only ('st.x' is "not found") and indexes the
//   row group's chunks by the top-level column's position, so every column after a STRUCT would
//   be probed in the wrong chunk: the STRUCT column is therefore always the last one here;
// - a NULL probe value is an error; NULLs never reach a filter;
// - its dictionary treats 0.0 and -0.0 as one value (the first one a row group meets is stored,
//   and is what the other reads back as), and a probe hashes the value's bits: probing 0.0 where
//   only -0.0 was stored is excluded. NaN is hashed as any value (excluded where none was stored).

import { DuckDBInstance } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const DUCKDB_PACKAGE = '@duckdb/node-api@1.5.6-r.1';
const PROBE_BATCH = 200; // parquet_bloom_probe calls in one UNION ALL query
const GOLDEN_PRESENT_KEYS = 60; // present values probed per golden column, at most (about)

function fail(message) {
  process.stderr.write(`duckdb_oracle: ${message}\n`);
  process.exit(2);
}

function quote(text) {
  return `'${String(text).replaceAll("'", "''")}'`;
}

function ident(name) {
  return `"${name.replaceAll('"', '""')}"`;
}

// A leaf's dotted path as a SQL expression: st.x is "st"."x".
function columnExpr(dotted) {
  return dotted.split('.').map(ident).join('.');
}

class Oracle {
  static async open() {
    const oracle = new Oracle();
    oracle.instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    oracle.con = await oracle.instance.connect();
    await oracle.rows(TEXT_OF_K);
    return oracle;
  }

  async rows(sql) {
    const reader = await this.con.runAndReadAll(sql);
    return reader.getRowObjectsJson();
  }

  close() {
    this.con.closeSync();
    this.instance.closeSync();
  }

  async version() {
    return (await this.rows('SELECT version() AS v'))[0].v;
  }

  async copy(spec, file) {
    const options = ['FORMAT parquet', `ROW_GROUP_SIZE ${spec.rowGroupSize}`,
      ...(spec.options ?? [])];
    await this.rows(`COPY (${spec.select}) TO ${quote(file)} (${options.join(', ')})`);
  }

  // parquet_metadata of every chunk, in row group then column order.
  async chunks(file) {
    const rows = await this.rows(`
      SELECT row_group_id, row_group_num_rows, column_id, path_in_schema, type, encodings,
             stats_null_count, num_values, bloom_filter_offset, bloom_filter_length
      FROM parquet_metadata(${quote(file)}) ORDER BY row_group_id, column_id`);
    return rows.map((r) => ({
      row_group: Number(r.row_group_id),
      row_group_rows: Number(r.row_group_num_rows),
      column_id: Number(r.column_id),
      path: String(r.path_in_schema).split(', ').join('.'),
      physical_type: r.type,
      encodings: r.encodings,
      null_count: r.stats_null_count === null ? null : Number(r.stats_null_count),
      num_values: Number(r.num_values),
      bloom_filter_offset: r.bloom_filter_offset === null ? null : Number(r.bloom_filter_offset),
      bloom_filter_length: r.bloom_filter_length === null ? null : Number(r.bloom_filter_length),
    }));
  }

  async duckdbType(file, dotted) {
    const rows = await this.rows(
      `DESCRIBE SELECT ${columnExpr(dotted)} AS v FROM read_parquet(${quote(file)})`);
    return rows[0].column_type;
  }

  // The distinct non-NULL values of a leaf in each row group, as DuckDB's VARCHAR casts (sorted),
  // found by the rows' file_row_number and the row groups' boundaries.
  async distinctByRowGroup(file, dotted, groups) {
    const bounds = [];
    let first = 0;
    for (const g of groups) {
      bounds.push(`(${g.row_group}, ${first}, ${first + g.num_rows})`);
      first += g.num_rows;
    }
    const expr = columnExpr(dotted);
    const rows = await this.rows(`
      WITH rg(row_group, first_row, end_row) AS (VALUES ${bounds.join(', ')})
      SELECT DISTINCT rg.row_group, CAST(${expr} AS VARCHAR) AS v
      FROM read_parquet(${quote(file)}, file_row_number = true) t
      JOIN rg ON t.file_row_number >= rg.first_row AND t.file_row_number < rg.end_row
      WHERE ${expr} IS NOT NULL
      ORDER BY rg.row_group, v`);
    const result = groups.map(() => []);
    for (const r of rows) result[Number(r.row_group)].push(r.v);
    return result;
  }

  // parquet_bloom_probe for every key: per key an array of bloom_filter_excludes by row group,
  // or null (with errors[index]) when DuckDB refuses the key.
  async probe(file, column, keys) {
    const type = await this.duckdbType(file, column);
    const groups = Number((await this.rows(
      `SELECT count(DISTINCT row_group_id) AS n FROM parquet_metadata(${quote(file)})`))[0].n);
    const results = new Array(keys.length).fill(null);
    const errors = {};
    const one = (index) => `SELECT ${index} AS k, row_group_id, bloom_filter_excludes ` +
      `FROM parquet_bloom_probe(${quote(file)}, ${quote(column)}, ` +
      `CAST(${quote(keys[index])} AS ${type}))`;
    const take = (rows) => {
      for (const r of rows) {
        const k = Number(r.k);
        if (results[k] === null) results[k] = new Array(groups).fill(null);
        results[k][Number(r.row_group_id)] = r.bloom_filter_excludes;
      }
    };
    for (let start = 0; start < keys.length; start += PROBE_BATCH) {
      const indices = [];
      for (let i = start; i < Math.min(keys.length, start + PROBE_BATCH); i++) indices.push(i);
      try {
        take(await this.rows(indices.map(one).join(' UNION ALL ')));
      } catch {
        // Some key did not cast: one query per key of this batch, to tell which.
        for (const i of indices) {
          try {
            take(await this.rows(one(i)));
          } catch (e) {
            errors[i] = e.message;
          }
        }
      }
    }
    for (let i = 0; i < keys.length; i++) {
      if (results[i] !== null && results[i].some((v) => typeof v !== 'boolean')) {
        fail(`${file} ${column}: key ${JSON.stringify(keys[i])} has no answer for some row group`);
      }
    }
    return { file, column, duckdb_type: type, row_groups: groups, results, errors };
  }

  // What a file holds, for manifest.json and expected.json.
  async describe(file) {
    const chunks = await this.chunks(file);
    const groups = [];
    const columns = new Map();
    for (const c of chunks) {
      groups[c.row_group] ??= { row_group: c.row_group, num_rows: c.row_group_rows };
      if (!columns.has(c.path)) {
        columns.set(c.path, {
          path: c.path, column_id: c.column_id, physical_type: c.physical_type, chunks: [],
        });
      }
      const column = columns.get(c.path);
      if (column.physical_type !== c.physical_type || column.column_id !== c.column_id) {
        fail(`${file}: column ${c.path} differs between row groups`);
      }
      column.chunks.push(c);
    }
    const bytes = fs.readFileSync(file);
    const out = [];
    for (const column of columns.values()) {
      const distinct = await this.distinctByRowGroup(file, column.path, groups);
      out.push({
        path: column.path,
        column_id: column.column_id,
        top_level: !column.path.includes('.'),
        duckdb_type: await this.duckdbType(file, column.path),
        physical_type: column.physical_type,
        chunks: column.chunks.map((c) => {
          const chunk = {
            row_group: c.row_group,
            encodings: c.encodings,
            null_count: c.null_count,
            num_values: c.num_values,
            bloom_filter_offset: c.bloom_filter_offset,
            bloom_filter_length: c.bloom_filter_length,
            distinct: distinct[c.row_group],
          };
          if (c.bloom_filter_offset !== null) Object.assign(chunk, filterAt(bytes, c, file));
          return chunk;
        }),
      });
    }
    return {
      file: path.basename(file),
      size: bytes.length,
      num_rows: groups.reduce((n, g) => n + g.num_rows, 0),
      row_groups: groups,
      columns: out,
    };
  }
}

// The BloomFilterHeader at a chunk's offset, read as far as DuckDB writes it: field 1 (numBytes,
// an i32: 0x15 and a zigzag varint), then the three unions and the stop byte. Gives num_bytes,
// header_bytes and the bitset's SHA-256.
function filterAt(bytes, chunk, file) {
  const at = chunk.bloom_filter_offset;
  if (bytes[at] !== 0x15) fail(`${file} ${chunk.path}: no numBytes field at ${at}`);
  let value = 0;
  let shift = 0;
  let pos = at + 1;
  for (;;) {
    const b = bytes[pos++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
  }
  const numBytes = value % 2 === 0 ? value / 2 : -(value + 1) / 2;
  const header = chunk.bloom_filter_length - numBytes;
  if (header !== pos - at + 13) {
    fail(`${file} ${chunk.path}: a header of ${header} bytes, expected ${pos - at + 13}`);
  }
  const bitset = bytes.subarray(at + header, at + header + numBytes);
  return {
    num_bytes: numBytes,
    header_bytes: header,
    bitset_sha256: createHash('sha256').update(bitset).digest('hex'),
  };
}

// ---------------------------------------------------------------------------------------------
// The files. In each SELECT, i is the row number and g = i // row group size its row group (one
// thread writes row groups of exactly ROW_GROUP_SIZE rows when that is a multiple of 2048).

// text_of(k), a macro: non-ASCII in most texts, a quote in some, long ones, and the empty
// string for k = 0.
const TEXT_OF_K = `CREATE TEMP MACRO text_of(k) AS CASE WHEN k = 0 THEN ''
  WHEN k % 7 = 0 THEN 'k' || k
  WHEN k % 7 = 1 THEN 'é' || k || 'ü'
  WHEN k % 7 = 2 THEN 'Жук-' || k
  WHEN k % 7 = 3 THEN '東京' || k
  WHEN k % 7 = 4 THEN '😀' || k || '🙂'
  WHEN k % 7 = 5 THEN 'O''Brien naïve café ' || k
  ELSE repeat('x', 40 + k % 90) || k END`;

const TEST_FILES = [
  {
    // Every column type, four row groups (the last short), values shifting between row groups so
    // a value is in some and not others; columns without filters; a STRUCT (last, see above).
    name: 'types.parquet',
    rowGroupSize: 2048,
    select: `
      SELECT
        CASE WHEN i % 13 = 0 THEN NULL ELSE text_of((i % 240) + 40 * g) END AS s,
        CASE (i % 300) + 50 * g WHEN 1 THEN -2147483648 WHEN 2 THEN 2147483647
          ELSE (((i % 300) + 50 * g) * 7919) % 20011 - 10005 END::INTEGER AS i32,
        ((i % 100) - 50 + 10 * g)::SMALLINT AS i16,
        CASE (i % 250) + 60 * g WHEN 3 THEN -9223372036854775808 WHEN 4 THEN 9223372036854775807
          ELSE (((i % 250) + 60 * g) * 1000000007 * 1000003)
            * (CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END)
          END::BIGINT AS i64,
        CASE
          WHEN i % 200 = 5 THEN (CASE WHEN g % 2 = 0 THEN '-0.0' ELSE '0.0' END)::DOUBLE
          WHEN i % 200 = 6 THEN (CASE WHEN g % 2 = 0 THEN '0.0' ELSE '-0.0' END)::DOUBLE
          WHEN i % 200 = 7 AND g % 2 = 0 THEN 'NaN'::DOUBLE
          WHEN i % 200 = 8 AND g % 2 = 1 THEN 'inf'::DOUBLE
          WHEN i % 200 = 9 AND g = 2 THEN '-inf'::DOUBLE
          WHEN i % 200 = 10 THEN 5e-324::DOUBLE
          WHEN i % 200 = 11 THEN 1.7976931348623157e308::DOUBLE
          WHEN i % 200 = 12 THEN -2.2250738585072014e-308::DOUBLE
          WHEN i % 200 = 13 THEN 0.1::DOUBLE
          ELSE (((i % 200) + 30 * g) - 100) / 7.0 END::DOUBLE AS d,
        CASE
          WHEN i % 120 = 3 THEN (CASE WHEN g % 2 = 0 THEN '-0.0' ELSE '0.0' END)::FLOAT
          WHEN i % 120 = 4 THEN 3.4028235e38::FLOAT
          WHEN i % 120 = 5 THEN 1e-45::FLOAT
          WHEN i % 120 = 6 THEN 0.1::FLOAT
          ELSE ((((i % 120) + 20 * g) - 60) / 4.0)::FLOAT END AS f,
        (i % 3 = 0) AS flag,
        (i * 1000 + 7)::BIGINT AS uniq,
        CASE WHEN g % 2 = 0 THEN 'm' || (i % 50) ELSE 'u' || i END AS mixed,
        CASE WHEN g = 1 THEN NULL ELSE (i % 40)::INTEGER END AS sparse,
        {'x': ((i % 60) - 30 + g)::INTEGER, 'y': 'y' || (i % 25) || 'ß'} AS st
      FROM (SELECT i, i // 2048 AS g FROM range(7500) r(i))`,
  },
  {
    // Larger filters (3000 distinct values a row group: 4 KiB), the smallest (one value: 32
    // bytes), and a last row group too short for a dictionary (no filter) for one of them.
    name: 'sizes.parquet',
    rowGroupSize: 16384,
    select: `
      SELECT ((i % 3000) - 1500 + 700 * g)::INTEGER AS big,
        7::INTEGER AS one,
        ((i % 1000) * 1000003 - 5 * g)::BIGINT AS wide,
        'w' || ((i * 7) % 1000 + 100 * g) || 'ë' AS txt,
        ((i % 700) / 3.0 - 17)::DOUBLE AS dbl
      FROM (SELECT i, i // 16384 AS g FROM range(36000) r(i))`,
  },
  {
    // BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.5: small, crowded filters, so that many absent keys are
    // false positives and must be answered "maybe" exactly where DuckDB cannot exclude them.
    name: 'fpp.parquet',
    rowGroupSize: 2048,
    options: ['BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.5'],
    select: `
      SELECT text_of((i % 400) + 100 * g + 1) AS s,
        ((i % 400) * 31 - 6000 + g)::INTEGER AS i32,
        ((i % 400) * -987654321987 + g)::BIGINT AS i64,
        ((i % 300) / 8.0 - 20 + g / 16.0)::DOUBLE AS d,
        ((i % 300) / 8.0 - 20 + g / 16.0)::FLOAT AS f
      FROM (SELECT i, i // 2048 AS g FROM range(8192) r(i))`,
  },
];

const GOLDEN_FILES = [
  {
    name: 'golden.parquet',
    rowGroupSize: 2048,
    select: `
      SELECT text_of((i % 40) + 10 * g) AS s,
        ((i % 30) * -37 + g)::INTEGER AS i32,
        ((i % 50) * 123456789012345 - g)::BIGINT AS i64,
        CASE WHEN i % 30 = 3 THEN '-0.0'::DOUBLE ELSE (i % 30) / 4.0 - 2 + g END::DOUBLE AS d,
        ((i % 20) / 8.0 - g)::FLOAT AS f,
        CASE WHEN g = 2 THEN i * 3 ELSE i % 10 END::INTEGER AS part
      FROM (SELECT i, i // 2048 AS g FROM range(4600) r(i))`,
  },
  {
    name: 'golden_fpp.parquet',
    rowGroupSize: 2048,
    options: ['BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.5'],
    select: `
      SELECT 'g' || ((i % 60) + 20 * g) || 'ø' AS s,
        ((i % 60) * 1009 - 30000 + g)::INTEGER AS i32,
        ((i % 60) * -4611686018427 + g)::BIGINT AS i64,
        ((i % 60) / 10.0 + g)::DOUBLE AS d
      FROM (SELECT i, i // 2048 AS g FROM range(4500) r(i))`,
  },
];

// Keys absent from `present` (a Set of DuckDB's VARCHAR casts), of the column's type: `count`
// of them, deterministic, after the special values of FLOAT and DOUBLE that are absent.
function absentKeys(duckdbType, present, count) {
  const out = [];
  if (duckdbType === 'FLOAT' || duckdbType === 'DOUBLE') {
    out.push(...['0.0', '-0.0', 'nan', 'inf', '-inf'].filter((k) => !present.has(k)));
  }
  for (let n = 1; out.length < count; n++) {
    let key;
    switch (duckdbType) {
      case 'VARCHAR': key = n % 2 ? `absent-${n}` : `nié-${n}-Ж`; break;
      case 'INTEGER': key = String(n % 2 ? 100003 * n : -7 * n - 2); break;
      case 'BIGINT': key = String(n % 2 ? 5000000029n * BigInt(n) : -3n * BigInt(n) - 1n); break;
      case 'DOUBLE':
      case 'FLOAT': key = String(n % 2 ? n / 7 + 1000.5 : -n * 0.3); break;
      default: fail(`no absent keys for ${duckdbType}`);
    }
    if (!present.has(key)) out.push(key);
  }
  return out;
}

async function writeTestFiles(outdir) {
  const oracle = await Oracle.open();
  fs.mkdirSync(outdir, { recursive: true });
  const manifest = { duckdb_version: await oracle.version(), package: DUCKDB_PACKAGE, files: [] };
  for (const spec of TEST_FILES) {
    const file = path.join(outdir, spec.name);
    await oracle.copy(spec, file);
    manifest.files.push(await oracle.describe(file));
  }
  fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 1));
  oracle.close();
}

async function writeGolden(outdir) {
  const oracle = await Oracle.open();
  fs.mkdirSync(outdir, { recursive: true });
  const expected = {
    duckdb_version: await oracle.version(),
    package: DUCKDB_PACKAGE,
    about: 'Written by tests/parquet/duckdb_oracle.mjs golden; see README.md.',
    files: [],
  };
  for (const spec of GOLDEN_FILES) {
    const file = path.join(outdir, spec.name);
    await oracle.copy(spec, file);
    const described = await oracle.describe(file);
    const entry = {
      file: spec.name, size: described.size, row_groups: described.row_groups, columns: [],
    };
    for (const column of described.columns) {
      const present = new Set(column.chunks.flatMap((c) => c.distinct));
      const sorted = [...present].sort();
      const step = Math.ceil(sorted.length / GOLDEN_PRESENT_KEYS);
      const keys = sorted.filter((_, i) => i % step === 0);
      keys.push(...absentKeys(column.duckdb_type, present, Math.max(8, keys.length)));
      const probed = await oracle.probe(file, column.path, keys);
      if (Object.keys(probed.errors).length) {
        fail(`${spec.name} ${column.path}: ${JSON.stringify(probed.errors)}`);
      }
      entry.columns.push({
        path: column.path,
        physical_type: column.physical_type,
        duckdb_type: column.duckdb_type,
        chunks: column.chunks.map((c) => ({
          row_group: c.row_group,
          bloom_filter_offset: c.bloom_filter_offset,
          bloom_filter_length: c.bloom_filter_length,
          num_bytes: c.num_bytes ?? null,
          header_bytes: c.header_bytes ?? null,
          bitset_sha256: c.bitset_sha256 ?? null,
          distinct: c.distinct,
        })),
        probes: keys.map((key, i) => ({ key, excludes: probed.results[i] })),
      });
    }
    expected.files.push(entry);
  }
  fs.writeFileSync(path.join(outdir, 'expected.json'), `${pretty(expected, '')}\n`);
  oracle.close();
}

// JSON with a line per object or array that holds no other (a probe, a chunk), indented.
function pretty(value, indent) {
  const flat = (v) => v === null || typeof v !== 'object';
  const shallow = (v) => flat(v) || (Array.isArray(v) ? v : Object.values(v)).every(
    (x) => flat(x) || (Array.isArray(x) && x.every(flat)));
  if (shallow(value)) return JSON.stringify(value);
  const inner = `${indent} `;
  if (Array.isArray(value)) {
    return `[\n${value.map((v) => inner + pretty(v, inner)).join(',\n')}\n${indent}]`;
  }
  const fields = Object.entries(value).map(
    ([k, v]) => `${inner}${JSON.stringify(k)}: ${pretty(v, inner)}`);
  return `{\n${fields.join(',\n')}\n${indent}}`;
}

async function probeJobs(jobs, out) {
  const oracle = await Oracle.open();
  const results = [];
  for (const job of jobs) results.push(await oracle.probe(job.file, job.column, job.keys));
  fs.writeFileSync(out, JSON.stringify(results));
  oracle.close();
}

const [mode, ...args] = process.argv.slice(2);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
if (mode === 'write' && args.length === 1) {
  await writeTestFiles(args[0]);
} else if (mode === 'golden' && args.length === 1) {
  await writeGolden(args[0]);
} else if (mode === 'probe' && args.length === 4) {
  const [file, column, keysFile, out] = args;
  const oracle = await Oracle.open();
  fs.writeFileSync(out, JSON.stringify(await oracle.probe(file, column, readJson(keysFile))));
  oracle.close();
} else if (mode === 'probe-batch' && args.length === 2) {
  await probeJobs(readJson(args[0]), args[1]);
} else {
  fail('usage: duckdb_oracle.mjs write OUTDIR | golden OUTDIR'
       + ' | probe FILE COLUMN KEYS_JSON OUT_JSON | probe-batch JOBS_JSON OUT_JSON');
}
