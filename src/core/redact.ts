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

/**
 * Secrets in free text, as a transcript holds them: a `cat .env` or `env` dump in a
 * tool result, a key pasted into a prompt, `Authorization: Bearer …` in a curl
 * command, a PEM private key, a database URL with its password. `redactSecrets`
 * replaces each with a visible marker that names its kind (`[redacted: aws-access-key]`),
 * so a reader sees that something was there and what, never the value. Used before
 * anything read from a transcript is kept (the observer's cutter) and again before a
 * wiki entry or proposal is written (a model may have read the secret itself).
 *
 * Shapes only: it catches the well-known token formats and `NAME=value` where the
 * name says secret, not a password typed as a bare word. Pure string work, no I/O.
 */

interface Rule {
  kind: string;
  pattern: RegExp;
  /** The replacement; `$<keep>` (a named group) is kept in front of the marker. */
  keepPrefix?: boolean;
}

const mark = (kind: string): string => `[redacted: ${kind}]`;

/**
 * Applied in order: the multi-line and structured shapes first (a PEM block, a URL's
 * password, an Authorization header), then token formats, then `NAME=value`, whose
 * value may already be a marker (`GITHUB_TOKEN=[redacted: github-token]`) and is then left.
 */
const RULES: readonly Rule[] = [
  // A preview cut inside the block has no END line: everything after BEGIN goes.
  { kind: 'private-key', pattern: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$)/g },
  { kind: 'url-password', pattern: /(?<keep>\b[a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"`]+:)(?!\[redacted)[^\s/?#@'"`]+(?=@)/gi, keepPrefix: true },
  { kind: 'bearer-token', pattern: /(?<keep>\b(?:Authorization|Proxy-Authorization)["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|Bot)\s+)[A-Za-z0-9._~+/=:-]{6,}/gi, keepPrefix: true },
  { kind: 'bearer-token', pattern: /(?<keep>\bBearer\s+)[A-Za-z0-9._~+/-]{16,}=*/g, keepPrefix: true },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { kind: 'anthropic-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g },
  { kind: 'openai-key', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: 'stripe-key', pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g },
  { kind: 'gitlab-token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g },
  { kind: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  // NAME=value / NAME: value / "name": "value" where the name says secret (env dumps, .env, YAML, JSON).
  {
    kind: 'secret',
    pattern:
      /(?<keep>(?:\b[A-Z0-9_]*(?:SECRET|TOKEN(?!S)|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH_KEY|SESSION_KEY|CLIENT_KEY|SIGNING_KEY)[A-Z0-9_]*|"[A-Za-z0-9_-]*(?:secret|token|password|passwd|api_?key|apiKey|access_?key|private_?key|credentials?)[A-Za-z0-9_-]*")\s*(?:=|:\s*)\s*)(?!\[redacted)(?:"[^"\n]+"|'[^'\n]+'|[^\s"',;}\]]+)/g,
    keepPrefix: true,
  },
];

/** A cheap first look: text with none of these cannot match a rule, and is returned untouched. */
const MAYBE = /PRIVATE KEY|:\/\/[^\s/@]*:|auth|bearer|AKIA|ASIA|ABIA|ACCA|sk-|sk_|rk_|gh[pousr]_|github_pat_|glpat-|xox|AIza|npm_|eyJ|secret|token|passw|passphrase|key|credential/i;

/** The text with every secret shape it holds replaced by `[redacted: <kind>]`. */
export function redactSecrets(text: string): string {
  if (!text || !MAYBE.test(text)) return text;
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.pattern, (...args: unknown[]) => {
      const groups = args[args.length - 1] as Record<string, string | undefined> | undefined;
      return `${rule.keepPrefix ? (groups?.keep ?? '') : ''}${mark(rule.kind)}`;
    });
  }
  return out;
}

/** Whether redactSecrets would change the text. */
export function holdsSecret(text: string): boolean {
  return redactSecrets(text) !== text;
}

/**
 * A JSON value with redactSecrets applied to every string in it (keys are left
 * as they are). For what was stored before it was redacted: the observer's older
 * bundles, read again. Returns the same shape.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}
