/**
 * Database URLs as messages and logs may show them. A PostgreSQL URL carries
 * its password either as `user:pw@` or as a query parameter
 * (`?password=…`, which libpq and node-postgres read just the same); both
 * become `***`. Pure string work, so config.ts can use it without loading pg.
 */

/** Query parameters a connection string may carry a secret in. */
const SECRET_PARAMS = /^(password|sslpassword)$/i;

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) if (SECRET_PARAMS.test(key)) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return '(unparseable database URL)';
  }
}
