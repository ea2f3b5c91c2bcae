// Which vector strategy each engine gets for search.vectorIndex: auto picks HNSW on server Postgres with
// pgvector ≥ 0.8, else the quantized scan where pgvector ≥ 0.7 (embedded PGlite), else exact; an explicit
// strategy that cannot work is refused with the reason, never downgraded.
import t from 'tap';
import { chooseVectorIndex, versionAtLeast } from '../../../plugins/search/embeddings/vector-search-choice.js';
import { hnswIndexName } from '../../../plugins/search/embeddings/vector-search-hnsw.js';
import { quantizedCandidateLimit } from '../../../plugins/search/embeddings/vector-search-quantized.js';

t.test('pgvector versions compare numerically', async (t) => {
  t.ok(versionAtLeast('0.8.0', '0.8.0'));
  t.ok(versionAtLeast('0.8.7', '0.8.0'));
  t.ok(versionAtLeast('0.10.1', '0.8.0'), '0.10 is newer than 0.8');
  t.ok(versionAtLeast('1.0', '0.8.0'));
  t.notOk(versionAtLeast('0.7.4', '0.8.0'));
  t.notOk(versionAtLeast('0.5', '0.8.0'));
});

t.test('auto: hnsw on postgres with pgvector ≥ 0.8, quantized where pgvector ≥ 0.7, exact elsewhere', async (t) => {
  t.match(chooseVectorIndex('auto', 'postgres', '0.8.7', 1024), { strategy: 'hnsw' });
  t.match(chooseVectorIndex('auto', 'postgres', '0.7.4', 1024), {
    strategy: 'quantized',
    reason: /0\.7\.4 is older than 0\.8\.0/,
  });
  t.match(chooseVectorIndex('auto', 'postgres', '0.6.2', 1024), {
    strategy: 'exact',
    reason: /0\.6\.2 is older than 0\.8\.0.*0\.6\.2 is older than 0\.7\.0 and lacks binary_quantize/,
  });
  t.match(chooseVectorIndex('auto', 'postgres', null, 1024), { strategy: 'exact', reason: /not installed/ });
  t.match(chooseVectorIndex('auto', 'postgres', '0.8.7', 4096), { strategy: 'quantized', reason: /4096 is outside/ });
  t.match(chooseVectorIndex('auto', 'pglite', '0.8.7', 1024), { strategy: 'quantized', reason: /embedded PGlite/ });
  t.match(chooseVectorIndex('auto', 'pglite', '0.6.0', 1024), {
    strategy: 'exact',
    reason: /embedded PGlite.*lacks binary_quantize/,
  });
  t.match(chooseVectorIndex('exact', 'postgres', '0.8.7', 1024), { strategy: 'exact' });
  t.match(chooseVectorIndex('exact', 'pglite', '0.8.7', 1024), { strategy: 'exact' });
});

t.test('explicit hnsw that cannot work is refused with the way out', async (t) => {
  t.match(chooseVectorIndex('hnsw', 'postgres', '0.8.0', 768), { strategy: 'hnsw' });
  t.match(chooseVectorIndex('hnsw', 'pglite', '0.8.7', 1024), {
    refuse:
      /search\.vectorIndex is hnsw, but the database is embedded PGlite.*set search\.vectorIndex to auto or exact/,
  });
  t.match(chooseVectorIndex('hnsw', 'postgres', '0.7.0', 1024), {
    refuse: /pgvector 0\.7\.0 is older than 0\.8\.0 and lacks hnsw\.iterative_scan/,
  });
  t.match(chooseVectorIndex('hnsw', 'postgres', null, 1024), { refuse: /pgvector is not installed/ });
});

t.test(
  'explicit quantized works on either engine with binary_quantize, else is refused with the way out',
  async (t) => {
    t.match(chooseVectorIndex('quantized', 'pglite', '0.8.7', 1024), { strategy: 'quantized' });
    t.match(chooseVectorIndex('quantized', 'postgres', '0.8.7', 1024), { strategy: 'quantized' });
    t.match(
      chooseVectorIndex('quantized', 'postgres', '0.7.0', 8000),
      { strategy: 'quantized' },
      'no dimension cap: nothing is indexed',
    );
    t.match(chooseVectorIndex('quantized', 'postgres', '0.6.2', 1024), {
      refuse:
        /search\.vectorIndex is quantized, but pgvector 0\.6\.2 is older than 0\.7\.0 and lacks binary_quantize; run ALTER EXTENSION vector UPDATE.*set search\.vectorIndex to auto or exact/,
    });
    t.match(chooseVectorIndex('quantized', 'postgres', null, 1024), {
      refuse: /search\.vectorIndex is quantized, but pgvector is not installed/,
    });
  },
);

t.test('quantized candidates: the setting per wanted note', async (t) => {
  t.equal(quantizedCandidateLimit(15, 40), 600);
  t.equal(quantizedCandidateLimit(1, 40), 40);
  t.equal(quantizedCandidateLimit(10, 0), 10, 'at least one chunk per wanted note');
});

t.test('the index name carries only a validated integer', async (t) => {
  t.equal(hnswIndexName(1024), 'search_chunks_hnsw_1024');
  t.throws(() => hnswIndexName(0));
  t.throws(() => hnswIndexName(4001));
  t.throws(() => hnswIndexName(1.5));
});
