/**
 * Two rules of issue 14 that the import test cannot see, read from the sources
 * with TypeScript's parser (comments and the text of strings that are not SQL
 * are ignored):
 *
 * (a) the knowledge index's SQL lives in `src/knowledge/index/`, one module
 *     per operation: elsewhere in src/knowledge no `.prepare(`, `.pragma(`,
 *     `.transaction(`, `.exec('…')` with a string, no string that starts like
 *     an SQL statement, and no value import of better-sqlite3 (a type import,
 *     to pass a handle down, is fine);
 * (b) no module-level mutable state in src/knowledge or src/observer: every
 *     cache belongs to a service (KnowledgeService, its lifecycle context,
 *     ObserverService) that creates it and drops it on stop(). A top-level
 *     `let`/`var`, or a top-level Map/Set/WeakMap/WeakSet that starts empty or
 *     is mutated in its file, fails unless ALLOWED names it with the reason
 *     it is not a service's state. A Set or Map built from constants and never
 *     changed (a stop-word list) is a constant, not state.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** `file: name` → why it may stay module-level. Each must still exist (a stale entry fails too). */
const ALLOWED: Record<string, string> = {
  'src/knowledge/format/lock.ts: held': 'the corpus lock re-entrancy count: a lock is held by the process (kernel lock per connection, lock file per pid), so a nested take in any service must see it',
  'src/knowledge/graph/codeGraph.ts: tsModule': 'the lazily imported typescript module, the same for every service',
  'src/knowledge/graph/treeSitterCode.ts: runtime': 'the lazily loaded tree-sitter WebAssembly runtime, the same for every service',
  'src/knowledge/graph/treeSitterCode.ts: parsers': 'one parser per grammar, loaded once: a pure function of the bundled grammar file',
  'src/knowledge/lifecycle/session/report.ts: templateReport': 'the report template, parsed on first use (parsing loads the yaml package): a pure function of a constant, the same for every reader',
  'src/knowledge/vectors/onnxEmbedder.ts: ortModule': 'the lazily imported onnxruntime-web module (sessions are per embedder)',
  'src/knowledge/search/bm25f.ts: STEMS': 'a bounded memo of porterStem, a pure function of the token',
  'src/knowledge/index/exposure.ts: statements': 'a prepared statement per open index handle, in a WeakMap: it goes with the handle',
  'src/knowledge/index/query.ts: stmtCache': 'prepared statements per open index handle, in a WeakMap: they go with the handle',
  'src/knowledge/index/query.ts: counts': 'row and word counts per open index handle while it is unchanged, in a WeakMap: they go with the handle',
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== '__fixtures__') out.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const rel = (path: string) => relative(ROOT, path).split(sep).join('/');
const parse = (name: string, text: string) => ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, name.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);

const SQL_START = /^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|WITH\s+\w+\s+AS)\b/i;
// better-sqlite3's methods; `prepare` and `exec` count with a string argument on anything but a regular
// expression literal (`preparer.prepare(docs)` and `/re/.exec(text)` are not SQL), `pragma` and `transaction` always.
const DB_METHODS = new Set(['pragma', 'transaction']);
const stringy = (n: ts.Node | undefined) => !!n && (ts.isStringLiteralLike(n) || ts.isTemplateExpression(n));

/** Where a file speaks SQL: `line: what`. */
export function sqlUses(name: string, text: string): string[] {
  const sf = parse(name, text);
  const hits: string[] = [];
  const at = (n: ts.Node, what: string) => hits.push(`${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}: ${what}`);
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text === 'better-sqlite3' && !n.importClause?.isTypeOnly) at(n, 'imports better-sqlite3 (a value, not a type)');
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
      const m = n.expression.name.text;
      const first = n.arguments[0];
      const onRegex = n.expression.expression.kind === ts.SyntaxKind.RegularExpressionLiteral;
      if (DB_METHODS.has(m)) at(n, `.${m}(`);
      else if ((m === 'prepare' || m === 'exec') && stringy(first) && !onRegex) at(n, `.${m}('…')`);
    }
    if ((ts.isStringLiteralLike(n) || ts.isTemplateHead(n)) && SQL_START.test(n.text)) at(n, `SQL text "${n.text.slice(0, 40)}"`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return hits;
}

/** Module-level mutable state of a file: the names of its top-level `let`/`var`s and of its mutable collections. */
export function moduleState(name: string, text: string): string[] {
  const sf = parse(name, text);
  const out: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    const list = st.declarationList;
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const d of list.declarations) {
      if (!ts.isIdentifier(d.name)) continue;
      const id = d.name.text;
      if (!isConst) {
        out.push(id);
        continue;
      }
      const init = d.initializer;
      if (!init || !ts.isNewExpression(init) || !ts.isIdentifier(init.expression) || !/^(Weak)?(Map|Set)$/.test(init.expression.text)) continue;
      const startsEmpty = !init.arguments || init.arguments.length === 0;
      const mutated = new RegExp(`\\b${id}\\s*\\.\\s*(set|add|delete|clear)\\s*\\(`).test(text);
      if (startsEmpty || mutated) out.push(id);
    }
  }
  return out;
}

describe('state and SQL rules of issue 14', () => {
  const knowledge = sourceFiles(join(ROOT, 'src', 'knowledge'));
  const observer = sourceFiles(join(ROOT, 'src', 'observer'));

  it('the detectors see what they look for (so an empty answer below means something)', () => {
    const sample = [
      "import Database from 'better-sqlite3';",
      "import type Db from 'better-sqlite3';",
      'let hits = 0;',
      'const cache = new Map<string, number>();',
      "const WORDS = new Set(['a', 'the']);",
      "const grown = new Set(['x']);",
      "grown.add('y');",
      "export function f(db: Db) { /^SELECT/.exec('x'); db.exec('DELETE FROM t'); return db.prepare(`SELECT * FROM t WHERE id = ${1}`); }",
    ].join('\n');
    expect(moduleState('sample.ts', sample)).toEqual(['hits', 'cache', 'grown']);
    expect(sqlUses('sample.ts', sample)).toEqual([
      '1: imports better-sqlite3 (a value, not a type)',
      ".exec('…')",
      'SQL text "DELETE FROM t"',
      ".prepare('…')",
      'SQL text "SELECT * FROM t WHERE id = "',
    ].map((w, i) => (i === 0 ? w : `8: ${w}`)));
  });

  it('keeps every SQL statement of the knowledge index in src/knowledge/index/', () => {
    expect(knowledge.length).toBeGreaterThan(50);
    const outside = knowledge.filter((f) => !rel(f).startsWith('src/knowledge/index/'));
    const found = outside.flatMap((f) => sqlUses(f, readFileSync(f, 'utf8')).map((h) => `${rel(f)}:${h}`));
    expect(found).toEqual([]);
    // And index/ is where it is: the rule would hold vacuously if the SQL had gone nowhere.
    const inside = knowledge.filter((f) => rel(f).startsWith('src/knowledge/index/'));
    expect(inside.flatMap((f) => sqlUses(f, readFileSync(f, 'utf8'))).length).toBeGreaterThan(20);
  });

  it('has no module-level mutable state in src/knowledge or src/observer beyond the allow-list', () => {
    const found = [...knowledge, ...observer].flatMap((f) => moduleState(f, readFileSync(f, 'utf8')).map((n) => `${rel(f)}: ${n}`));
    expect(found.filter((k) => !(k in ALLOWED))).toEqual([]);
    // An entry whose state is gone must leave the list, so the list stays the truth.
    expect(Object.keys(ALLOWED).filter((k) => !found.includes(k))).toEqual([]);
  });
});
