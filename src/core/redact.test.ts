import { describe, expect, it } from 'vitest';
import { redactUrl } from './redact.js';

describe('redactUrl', () => {
  it('masks a password in the userinfo and in the query string alike, keeping the rest', () => {
    expect(redactUrl('postgres://ann:s3cret@db.example:5432/maestro')).toBe('postgres://ann:***@db.example:5432/maestro');
    const masked = redactUrl('postgresql://ann@db.example/maestro?sslmode=require&password=s3cret&PassWord=again&sslpassword=k3y');
    expect(masked).not.toMatch(/s3cret|again|k3y/);
    expect(masked).toBe('postgresql://ann@db.example/maestro?sslmode=require&password=***&PassWord=***&sslpassword=***');
    expect(redactUrl('postgres://db.example/maestro?application_name=x')).toBe('postgres://db.example/maestro?application_name=x');
    expect(redactUrl('not a url with pw')).toBe('(unparseable database URL)');
  });
});
