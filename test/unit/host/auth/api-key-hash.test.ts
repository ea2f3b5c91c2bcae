// The stored form of an API key is the hex SHA-256 of the raw key: databases written by any earlier
// release hold keys in that form, so a change in how it is computed must not change a single byte.
import t from 'tap';
import { hashKey } from '../../../../src/host/auth/api-keys.js';

t.test('hashKey is the hex SHA-256 of the raw key, as stored since the first release', async (t) => {
  t.equal(hashKey('exo_example'), '405b3897c3837c66c52ae6a6274b4382822a811a8e164fb6682429959ee4a332');
  t.equal(hashKey(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'the empty string');
  t.equal(
    hashKey('exo_ключ'),
    '90e8726d8c29226600bec827ab4141304d52bf2422e4d79880994612eda496fd',
    'a non-ASCII key: the SHA-256 of its UTF-8 bytes',
  );
});
