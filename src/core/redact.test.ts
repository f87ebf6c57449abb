import { describe, expect, it } from 'vitest';
import { clipOutsideMarkers, cutOutsideMarkers, redactDeep, redactSecrets, redactSecretsWithSpans, redactUrl } from './redact.js';

describe('redactUrl', () => {
  it('masks a password in the userinfo and in the query string alike, keeping the rest', () => {
    expect(redactUrl('postgres://ann:s3cret@db.example:5432/maestro')).toBe('postgres://ann:***@db.example:5432/maestro');
    const masked = redactUrl('postgresql://ann@db.example/maestro?sslmode=require&password=s3cret&PassWord=again&sslpassword=k3y');
    expect(masked).not.toMatch(/s3cret|again|k3y/);
    expect(masked).toBe('postgresql://ann@db.example/maestro?sslmode=require&password=***&PassWord=***&sslpassword=***');
    expect(redactUrl('postgres://db.example/maestro?application_name=x')).toBe('postgres://db.example/maestro?application_name=x');
    expect(redactUrl('not a url with pw')).toBe('(unparseable database URL)');
    // One that does not parse keeps what follows its last @, and masks what could be a password before it.
    expect(redactUrl('postgres://ann:s3cr/et#@db.example:99999/maestro?password=k3y')).toBe('postgres://ann:***@db.example:99999/maestro?password=***');
    expect(redactUrl('postgres://ann:s3cret@host:5432x/maestro')).toBe('postgres://ann:***@host:5432x/maestro');
    expect(redactUrl('postgres://s3cret:99999/maestro')).toBe('(unparseable database URL)');
    expect(redactUrl('postgres://ann@db.example:99999/maestro')).toBe('postgres://ann@db.example:99999/maestro');
  });
});
describe('redactSecrets', () => {
  it('replaces the well-known token shapes with a marker naming the kind', () => {
    const cases: Array<[string, string]> = [
      ['key AKIAIOSFODNN7EXAMPLE here', 'key [redacted: aws-access-key] here'],
      ['use sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123', 'use [redacted: anthropic-key]'],
      ['OPENAI sk-proj-abcdefghijklmnopqrstuvwx1234', 'OPENAI [redacted: openai-key]'],
      ['ghp_16C7e42F292c6912E7710c838347Ae178B4a', '[redacted: github-token]'],
      ['github_pat_11ABCDEFG0123456789_abcdefghijklmnop', '[redacted: github-token]'],
      ['glpat-abcdefghijklmnopqrst', '[redacted: gitlab-token]'],
      ['xoxb-123456789012-abcdefghij', '[redacted: slack-token]'],
      ['AIzaSyA1234567890abcdefghijklmnopqrstuv', '[redacted: google-api-key]'],
      ['npm_abcdefghijklmnopqrstuvwxyz0123456789', '[redacted: npm-token]'],
      ['sk_live_abcdefghijklmnop1234', '[redacted: stripe-key]'],
      ['t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 't=[redacted: jwt]'],
    ];
    for (const [input, output] of cases) expect(redactSecrets(input)).toBe(output);
  });

  it('keeps the header, the URL and the variable name, and hides only the value', () => {
    expect(redactSecrets('curl -H "Authorization: Bearer abc.def-123456" https://api.example.com')).toBe('curl -H "Authorization: Bearer [redacted: bearer-token]" https://api.example.com');
    expect(redactSecrets("curl -H 'authorization: token 0123456789abcdef'")).toBe("curl -H 'authorization: token [redacted: bearer-token]'");
    expect(redactSecrets('postgres://admin:hunter2@db.example:5432/prod')).toBe('postgres://admin:[redacted: url-password]@db.example:5432/prod');
    expect(redactSecrets('DATABASE_URL=mysql://root:p%40ss@localhost/app')).toBe('DATABASE_URL=mysql://root:[redacted: url-password]@localhost/app');
    expect(redactSecrets('AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nPORT=3000')).toBe('AWS_SECRET_ACCESS_KEY=[redacted: secret]\nPORT=3000');
    expect(redactSecrets('export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a')).toBe('export GITHUB_TOKEN=[redacted: github-token]');
    expect(redactSecrets('DB_PASSWORD: "correct horse"')).toBe('DB_PASSWORD: [redacted: secret]');
    expect(redactSecrets('{"client_secret": "abc123", "name": "x"}')).toBe('{"client_secret": [redacted: secret], "name": "x"}');
  });

  it('removes a PEM private key, whole or cut short by a preview', () => {
    const pem = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----';
    expect(redactSecrets(`key:\n${pem}\ndone`)).toBe('key:\n[redacted: private-key]\ndone');
    expect(redactSecrets('✓ Read key.pem — -----BEGIN PRIVATE KEY----- MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')).toBe('✓ Read key.pem — [redacted: private-key]');
    expect(redactSecrets('-----BEGIN PUBLIC KEY----- MIIBIjANBg')).toBe('-----BEGIN PUBLIC KEY----- MIIBIjANBg');
  });

  it('leaves ordinary text, code and URLs alone', () => {
    for (const text of [
      'Fix the login token expiring too early in auth',
      'const token = await getToken(); expiresIn: 3600',
      'https://github.com/owner/repo/pull/12',
      'git push origin HEAD:refs/heads/main',
      'the key point is the cache TTL',
      'MAX_TOKENS=4096 PORT=3000',
      'ssh://git@github.com/owner/repo.git',
      '',
    ]) expect(redactSecrets(text)).toBe(text);
  });

  it('is idempotent', () => {
    const once = redactSecrets('AWS_SECRET_ACCESS_KEY=abc postgres://a:b@h/d Authorization: Bearer 0123456789abcdef');
    expect(redactSecrets(once)).toBe(once);
  });
});

describe('redactSecretsWithSpans', () => {
  it('gives redactSecrets\' text and, for each marker, the kind and the span of the original it replaced', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';
    const text = `export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\nDB_PASSWORD: "correct horse"\n${pem}\npostgres://admin:hunter2@db/prod AKIAIOSFODNN7EXAMPLE`;
    const { text: out, spans } = redactSecretsWithSpans(text);
    expect(out).toBe(redactSecrets(text));
    expect(spans.map((s) => [s.kind, text.slice(s.start, s.end)])).toEqual([
      ['github-token', 'ghp_16C7e42F292c6912E7710c838347Ae178B4a'],
      ['secret', '"correct horse"'],
      ['private-key', pem],
      ['url-password', 'hunter2'],
      ['aws-access-key', 'AKIAIOSFODNN7EXAMPLE'],
    ]);
    // Putting each span's marker in its place gives the redacted text back.
    let rebuilt = text;
    for (const s of [...spans].reverse()) rebuilt = `${rebuilt.slice(0, s.start)}[redacted: ${s.kind}]${rebuilt.slice(s.end)}`;
    expect(rebuilt).toBe(out);
    expect(redactSecretsWithSpans('nothing here')).toEqual({ text: 'nothing here', spans: [] });
    expect(redactSecretsWithSpans(out).spans).toEqual([]);
  });
});

describe('redactDeep', () => {
  it('redacts every string of a JSON value and keeps its shape and keys', () => {
    const value = { a: ['x AKIAIOSFODNN7EXAMPLE', 3, null, { AWS_SECRET_ACCESS_KEY: 'PASSWORD=abc' }], n: 1, ok: true };
    expect(redactDeep(value)).toEqual({ a: ['x [redacted: aws-access-key]', 3, null, { AWS_SECRET_ACCESS_KEY: 'PASSWORD=[redacted: secret]' }], n: 1, ok: true });
  });
});

describe('clipOutsideMarkers', () => {
  const text = redactSecrets('key sk-ant-api03-Zx9AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 and [redacted: not a marker');

  it('cuts before a marker it would split, at every length, and keeps a whole one', () => {
    expect(text).toBe('key [redacted: anthropic-key] and [redacted: not a marker');
    const marker = { from: 4, to: 29 };
    for (let max = 1; max <= text.length + 1; max++) {
      const end = cutOutsideMarkers(text, max);
      expect(end).toBe(max > marker.from && max < marker.to ? marker.from : max);
      const clipped = clipOutsideMarkers(text, max);
      expect(clipped.length).toBeLessThanOrEqual(max);
      // What is kept of the marker is all of it or none of it.
      expect(clipped.includes('[redacted: anthropic-key]') || !clipped.includes('[redacted')).toBe(true);
    }
    expect(clipOutsideMarkers(text, 20)).toBe('key …');
    expect(clipOutsideMarkers(text, 31)).toBe('key [redacted: anthropic-key] …');
    // Not a marker (no closing bracket, spaces in the kind): cut like any other text.
    expect(clipOutsideMarkers(text, 50)).toBe(`${text.slice(0, 49)}…`);
    expect(clipOutsideMarkers('short', 5)).toBe('short');
  });
});
