/**
 * The import rules of ARCHITECTURE §1, read from the sources with
 * TypeScript's own parser (imports, `export … from`, `import()` and
 * `import('…').T` types; type-only imports count too — a type that runs up
 * the layers still ties the lower layer to the higher one):
 *
 * (a) a `src/` folder imports only from folders below it in LAYERS; test
 *     files are exempt (they wire real components end to end); the web app
 *     imports from `src/` the pure `core` (values too) and otherwise only
 *     types, only from WEB_MAY_IMPORT;
 * (b) no import cycle among the files of `src/`, tests included.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

// Lowest first; a folder may import from those before it, never after it. ARCHITECTURE §1's order, with
// lib/config (process-wide helpers and the resolved config) under the subsystems, demo (the offline demo
// project) under the daemon, and app (the composition root that starts the daemon, its API and observer)
// under the CLI that runs it.
const LAYERS = ['core', 'lib', 'config', 'store', 'git', 'knowledge', 'agents', 'hooks', 'executor', 'observer', 'demo', 'daemon', 'api', 'mcp', 'app', 'cli'];

// Where the response types the board reads are declared (type-only, except core, which is pure and may be
// bundled); never the store, the daemon or other process code.
const WEB_MAY_IMPORT = new Set(['core', 'knowledge', 'agents', 'observer', 'api']);

interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === '__fixtures__') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Relative specifiers of one file, with whether each brings in types only. */
function specifiers(file: string): { spec: string; typeOnly: boolean }[] {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: { spec: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const allTypes = !!clause && (clause.isTypeOnly || (!clause.name && !!clause.namedBindings && ts.isNamedImports(clause.namedBindings) && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      out.push({ spec: node.moduleSpecifier.text, typeOnly: allTypes });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      out.push({ spec: node.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out.filter((s) => s.spec.startsWith('.'));
}

function resolveSpecifier(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  const stem = base.replace(/\.(js|jsx|mjs|cjs)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function edgesOf(files: readonly string[]): Edge[] {
  return files.flatMap((from) =>
    specifiers(from).flatMap(({ spec, typeOnly }) => {
      const to = resolveSpecifier(from, spec);
      return to && /\.tsx?$/.test(to) ? [{ from, to, typeOnly }] : [];
    }),
  );
}

const rel = (path: string) => relative(ROOT, path).split(sep).join('/');
/** `src/<folder>/…` → folder; anything else → null. */
const layerOf = (path: string) => {
  const parts = rel(path).split('/');
  return parts[0] === 'src' && parts.length > 2 ? parts[1]! : null;
};
const isTest = (path: string) => /\.test\.tsx?$/.test(path);

/** Strongly connected components with more than one file (Tarjan; recursive, which is fine at this size). */
function cycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(rel(w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import rules of ARCHITECTURE §1', () => {
  const srcFiles = sourceFiles(join(ROOT, 'src'));
  const srcEdges = edgesOf(srcFiles);

  it('names every src/ folder in the layer order', () => {
    const folders = new Set(srcFiles.map(layerOf));
    expect([...folders].filter((f) => f === null || !LAYERS.includes(f))).toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward = srcEdges
      .filter((e) => !isTest(e.from))
      .filter((e) => {
        const from = layerOf(e.from);
        const to = layerOf(e.to);
        return from !== null && to !== null && LAYERS.indexOf(to) > LAYERS.indexOf(from);
      })
      .map((e) => `${rel(e.from)} → ${rel(e.to)}`);
    expect(upward).toEqual([]);
  });

  it('lets the web app import core, and only types from the layers that declare responses', () => {
    const webEdges = edgesOf(sourceFiles(join(ROOT, 'web', 'src'))).filter((e) => rel(e.to).startsWith('src/'));
    expect(webEdges.length).toBeGreaterThan(0);
    const bad = webEdges.filter((e) => !WEB_MAY_IMPORT.has(layerOf(e.to) ?? '') || (!e.typeOnly && layerOf(e.to) !== 'core')).map((e) => `${rel(e.from)} → ${rel(e.to)}${e.typeOnly ? '' : ' (not type-only)'}`);
    expect(bad).toEqual([]);
  });

  it('has no import cycle in src/, type imports included', () => {
    expect(srcEdges.length).toBeGreaterThan(500);
    expect(cycles(srcEdges)).toEqual([]);
  });
});
