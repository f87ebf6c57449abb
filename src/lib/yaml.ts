/**
 * The `yaml` package, loaded on its first use: most processes that could read YAML never do (a run
 * worker reads a project's `config.yaml` only when it has one, and a scripted agent's script only
 * in tests and demos), and loading it costs each a third of a bare Node start (28 ms of CPU).
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}

/**
 * Where YAML that does not load goes wrong, and nothing of the text: `line L, column C` for a syntax error, from its
 * `linePos` (the package's `prettyErrors`, the default) or its offset and `lineCounter` (without them). The package's
 * message quotes the source line under a caret, and even its short form a token of the text (`Unexpected scalar
 * token in YAML stream: "…"`), while the file may be one a link sent us to. An error with no place (`toJS`'s
 * ReferenceError: an alias bomb, an alias with no anchor) is said up to its colon, before the alias's name.
 */
export function yamlErrorWhere(err: unknown, lineCounter?: { linePos(offset: number): { line: number; col: number } }): string {
  const e = err as { linePos?: Array<{ line: number; col: number }>; pos?: [number, number]; message?: unknown };
  const at = e.linePos?.[0] ?? (e.pos && lineCounter ? lineCounter.linePos(e.pos[0]) : undefined);
  if (at) return `line ${at.line}, column ${at.col}`;
  return (typeof e.message === 'string' ? e.message : '').split(/[:\n]/)[0]!.trim() || 'not valid YAML';
}
