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
    return redactUnparseable(url);
  }
}

/**
 * A URL that does not parse (a port past 65535, a `#` or `/` in the password) still shows where it points: what
 * follows its last `@` is kept and what comes before, the password's place, is masked. Without an `@` nothing
 * tells a password from a host, so nothing of it is shown.
 */
function redactUnparseable(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^:/?#@]*)(:.*)?@([^@]*)$/i.exec(url);
  if (!m) return '(unparseable database URL)';
  const [, scheme, user, password, rest = ''] = m;
  return `${scheme}${user}${password ? ':***' : ''}@${rest.replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1***')}`;
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

/** What stands in for a secret of a kind: `[redacted: aws-access-key]`. */
export const redactionMarker = (kind: string): string => `[redacted: ${kind}]`;
const mark = redactionMarker;

/** A whole marker, matched where it starts. Kinds are the RULES' kinds: lowercase words and dashes. */
const MARKER_AT = /\[redacted: [a-z0-9-]+\]/y;

/**
 * Where redacted text may be cut so that its first `end` characters are kept without
 * splitting a marker: `end` itself, or the start of the marker `end` falls inside. A title
 * cut inside one read `my key is [redacted: secr…` (a trial): half a marker looks like
 * a broken one, and a kind cut short names no kind. Cutting before it keeps the length.
 */
export function cutOutsideMarkers(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return end;
  // Markers hold no `[`, so only the nearest one starting before `end` can straddle it.
  const start = text.lastIndexOf('[redacted: ', end - 1);
  if (start < 0) return end;
  MARKER_AT.lastIndex = start;
  return MARKER_AT.test(text) && MARKER_AT.lastIndex > end ? start : end;
}

/** Redacted text of at most `max` characters: cut with `…`, never inside a marker (cutOutsideMarkers). */
export function clipOutsideMarkers(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, cutOutsideMarkers(text, max - 1))}…` : text;
}

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
  return applyRules(text);
}

/** One replacement redactSecrets makes: its kind, and the span of the ORIGINAL text the marker stands for. */
export interface SecretSpan {
  kind: string;
  start: number;
  end: number;
}

/**
 * redactSecrets, and where in the given text each marker's secret was (sorted,
 * disjoint): for a report that names the line and the kind of a secret without
 * showing it (`maestro wiki lint`). The same rules in the same order, so the
 * text is exactly redactSecrets(text).
 */
export function redactSecretsWithSpans(text: string): { text: string; spans: SecretSpan[] } {
  const spans: SecretSpan[] = [];
  const out = applyRules(text, spans);
  return { text: out, spans: spans.sort((a, b) => a.start - b.start) };
}

/** A replacement one rule made in the text as it was when the rule ran. */
interface Cut {
  start: number;
  end: number;
  marker: string;
}

function applyRules(text: string, spans?: SecretSpan[]): string {
  if (!text || !MAYBE.test(text)) return text;
  let out = text;
  // With spans wanted: for each character of `out`, the span of `text` it stands for (a copied
  // character its own; each character of a marker the whole secret it replaced). Built at the
  // first cut: most texts that pass MAYBE hold no secret, and a long one would pay for two arrays.
  let map: CharMap | null = null;
  for (const rule of RULES) {
    const cuts: Cut[] = [];
    out = out.replace(rule.pattern, (...args: unknown[]) => {
      // replace passes (match, ...groups, offset, whole, namedGroups?): the named groups only when the pattern has some.
      const named = typeof args[args.length - 1] === 'object';
      const groups = named ? (args[args.length - 1] as Record<string, string | undefined>) : undefined;
      const offset = args[args.length - (named ? 3 : 2)] as number;
      const keep = rule.keepPrefix ? (groups?.keep ?? '') : '';
      if (spans) cuts.push({ start: offset + keep.length, end: offset + (args[0] as string).length, marker: mark(rule.kind) });
      return `${keep}${mark(rule.kind)}`;
    });
    if (spans && cuts.length) map = remap(map ?? identity(text.length), cuts, rule.kind, spans);
  }
  return out;
}

/** For each character of the text redacted so far, the span [from, to) of the original it stands for. */
interface CharMap {
  from: number[];
  to: number[];
}

function identity(length: number): CharMap {
  return { from: Array.from({ length }, (_, i) => i), to: Array.from({ length }, (_, i) => i + 1) };
}

/** The character map after one rule's cuts; each cut's original span is added to `spans` (replacing any it swallowed). */
function remap(map: CharMap, cuts: readonly Cut[], kind: string, spans: SecretSpan[]): CharMap {
  const from: number[] = [];
  const to: number[] = [];
  let i = 0;
  for (const cut of cuts) {
    for (; i < cut.start; i++) {
      from.push(map.from[i]!);
      to.push(map.to[i]!);
    }
    const span = { kind, start: map.from[cut.start]!, end: map.to[cut.end - 1]! };
    // A later rule's match over an earlier marker stands for both: keep the one span.
    for (let k = spans.length - 1; k >= 0; k--) if (spans[k]!.start >= span.start && spans[k]!.end <= span.end) spans.splice(k, 1);
    spans.push(span);
    for (let k = 0; k < cut.marker.length; k++) {
      from.push(span.start);
      to.push(span.end);
    }
    i = cut.end;
  }
  for (; i < map.from.length; i++) {
    from.push(map.from[i]!);
    to.push(map.to[i]!);
  }
  return { from, to };
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
