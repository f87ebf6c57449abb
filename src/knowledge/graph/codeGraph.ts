/**
 * The code graph for `maestro search --code` and `--kg`: files, their exported
 * symbols and their imports, read with the TypeScript compiler API
 * (`ts.createSourceFile`, syntax only — no type checking, so a file costs
 * about a parse) for .ts .tsx .mts .cts .js .jsx .mjs .cjs, and tree-sitter
 * grammars (treeSitterCode.ts) for Python (.py), Go (.go), Rust (.rs),
 * Java (.java) and Ruby (.rb).
 *
 * Kept in the knowledge index database, updated by mtime like the corpus.
 * `typescript` and the tree-sitter runtime are imported lazily, and only for
 * changed files of their languages: a plain `maestro search` loads neither.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { MaestroError } from '../../core/errors.js';
import type { CodeSymbol, ParsedCodeFile } from './codeFile.js';
import { markCodeSynced, replaceCodeFiles, storedCodeFiles, type CodeFileWrite, type CodeSymbolWrite } from '../index/codeFiles.js';
import { docAt, fileDoc } from './docComments.js';
import { indexText } from '../format/text.js';
import { TREE_SITTER_EXT, parseTreeSitterFile, resolveContext, resolveTreeSitterImport } from './treeSitterCode.js';

const TS_EXT = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);
const CODE_EXT = new Set([...TS_EXT, ...Object.keys(TREE_SITTER_EXT)]);
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', '.workflow', '.maestro', 'out', 'vendor', 'target', '__pycache__', 'venv', '.venv', 'site-packages']);
/** Bounds for huge repositories: the graph stays useful and a scan stays a few seconds at most. */
export const MAX_CODE_FILES = 20_000;
const MAX_CODE_FILE_BYTES = 1024 * 1024;

type TS = typeof import('typescript');
let tsModule: TS | null = null;
async function loadTs(): Promise<TS> {
  if (tsModule) return tsModule;
  try {
    const mod = (await import('typescript')) as unknown as { default?: TS } & TS;
    tsModule = mod.default ?? mod;
    return tsModule;
  } catch (err) {
    throw new MaestroError('CONFIG_INVALID', `The code graph needs the "typescript" package, which is not installed: ${(err as Error).message}`);
  }
}

export function listCodeFiles(projectDir: string): Array<{ path: string; mtimeMs: number; size: number }> {
  const out: Array<{ path: string; mtimeMs: number; size: number }> = [];
  const walk = (dir: string) => {
    let ents;
    try {
      ents = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of ents) {
      if (out.length >= MAX_CODE_FILES) return;
      if (e.name.startsWith('.') && e.name !== '.') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) walk(p);
      } else if (e.isFile() && CODE_EXT.has(extname(e.name)) && !e.name.endsWith('.d.ts')) {
        try {
          const st = statSync(p);
          if (st.size <= MAX_CODE_FILE_BYTES) out.push({ path: p, mtimeMs: st.mtimeMs, size: st.size });
        } catch {
          // vanished
        }
      }
    }
  };
  walk(projectDir);
  return out;
}

export type { CodeSymbol, ParsedCodeFile } from './codeFile.js';

export function parseCodeFile(ts: TS, path: string, text: string): ParsedCodeFile {
  const kind = path.endsWith('x') ? ts.ScriptKind.TSX : path.match(/\.[mc]?js$/) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const symbols: CodeSymbol[] = [];
  const imports: string[] = [];
  const lineOf = (n: import('typescript').Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const sig = (n: import('typescript').Node) => n.getText(sf).split('\n')[0]!.slice(0, 160);
  const exported = (n: import('typescript').Node) =>
    ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) imports.push(st.moduleSpecifier.text);
    else if (ts.isExportDeclaration(st)) {
      if (st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) imports.push(st.moduleSpecifier.text);
      if (st.exportClause && ts.isNamedExports(st.exportClause)) for (const el of st.exportClause.elements) symbols.push({ name: el.name.text, kind: 'export', line: lineOf(el), signature: sig(st) });
    } else if (ts.isExportAssignment(st)) symbols.push({ name: 'default', kind: 'default', line: lineOf(st), signature: sig(st) });
    else if (exported(st)) {
      const add = (name: string | undefined, k: string) => name && symbols.push({ name, kind: k, line: lineOf(st), signature: sig(st) });
      if (ts.isFunctionDeclaration(st)) add(st.name?.text ?? 'default', 'function');
      else if (ts.isClassDeclaration(st)) add(st.name?.text ?? 'default', 'class');
      else if (ts.isInterfaceDeclaration(st)) add(st.name.text, 'interface');
      else if (ts.isTypeAliasDeclaration(st)) add(st.name.text, 'type');
      else if (ts.isEnumDeclaration(st)) add(st.name.text, 'enum');
      else if (ts.isModuleDeclaration(st)) add(st.name.getText(sf), 'namespace');
      else if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) add(d.name.text, 'variable');
    }
  }
  // require('x') and import('x') anywhere in the file.
  const visit = (n: import('typescript').Node): void => {
    if (ts.isCallExpression(n) && n.arguments.length === 1 && ts.isStringLiteral(n.arguments[0]!)) {
      if ((ts.isIdentifier(n.expression) && n.expression.text === 'require') || n.expression.kind === ts.SyntaxKind.ImportKeyword) imports.push((n.arguments[0] as import('typescript').StringLiteral).text);
    }
    ts.forEachChild(n, visit);
  };
  if (/\brequire\s*\(|\bimport\s*\(/.test(text)) visit(sf);
  return { symbols, imports: [...new Set(imports)] };
}

/** Resolves a relative import to a file in the project (`.js` written for a `.ts` source included). */
function resolveImport(fromFile: string, spec: string, known: Set<string>): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(fromFile), spec);
  const stem = base.replace(/\.(m|c)?js$/, '');
  const tries = [base, ...['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'].flatMap((e) => [stem + e, join(base, `index${e}`)])];
  return tries.find((t) => known.has(t)) ?? null;
}

export interface CodeSyncReport {
  files: number;
  changed: number;
  symbols: number;
}

export async function syncCodeGraph(db: Database.Database, projectDir: string): Promise<CodeSyncReport> {
  const files = listCodeFiles(projectDir);
  const stored = storedCodeFiles(db);
  const current = new Set(files.map((f) => f.path));
  // The index keeps project-relative paths (a moved checkout keeps its graph); compare in that form.
  const rel = (p: string) => relative(projectDir, p).split('\\').join('/');
  const currentRel = new Set(files.map((f) => rel(f.path)));
  const changed = files.filter((f) => {
    const s = stored.get(rel(f.path));
    return !s || s.mtime_ms !== f.mtimeMs || s.size !== f.size;
  });
  const removed = [...stored.keys()].filter((p) => !currentRel.has(p));
  if (changed.length || removed.length) {
    const ts = changed.some((f) => TS_EXT.has(extname(f.path))) ? await loadTs() : null;
    const parsed: Array<(typeof changed)[number] & ParsedCodeFile & { lines: string[] }> = [];
    for (const f of changed) {
      let text = '';
      try {
        text = readFileSync(f.path, 'utf8');
      } catch {
        // unreadable: indexed as empty
      }
      const lang = TREE_SITTER_EXT[extname(f.path)];
      parsed.push({ ...f, ...(lang ? await parseTreeSitterFile(lang, text) : parseCodeFile(ts!, f.path, text)), lines: text.split(/\r?\n/) });
    }
    const ctx = resolveContext(projectDir, current);
    replaceCodeFiles(db, removed, parsed.map((f) => codeFileWrite(f, rel, (spec) => {
      const lang = TREE_SITTER_EXT[extname(f.path)];
      return lang ? resolveTreeSitterImport(lang, f.path, spec, ctx) : [resolveImport(f.path, spec, current)].filter((t): t is string => t !== null);
    })));
  }
  // Marks the code graph as built (even when empty), so a mixed search can tell "empty" from "not initialised".
  const symbols = markCodeSynced(db, Date.now());
  return { files: files.length, changed: changed.length, symbols };
}

/** A parsed file as the index stores it: the file's own symbol first, then each symbol, with its FTS text. */
function codeFileWrite(f: { path: string; mtimeMs: number; size: number; lines: string[] } & ParsedCodeFile, rel: (p: string) => string, resolveSpec: (spec: string) => string[]): CodeFileWrite {
  const r = rel(f.path);
  const base = r.split('/').pop()!;
  const pathText = r.replace(/[/.]/g, ' ');
  const fileSymbol: CodeSymbolWrite = { id: `file:${r}`, name: base, kind: 'file', line: null, signature: '', fts: { name: indexText(base.replace(/\.\w+$/, '')), path: pathText, doc: indexText(fileDoc(f.lines)) } };
  const symbols = f.symbols.map((s) => ({ id: `code:${r}#${s.name}`, name: s.name, kind: s.kind, line: s.line, signature: s.signature, fts: { name: indexText(s.name), path: pathText, doc: indexText(docAt(f.lines, s.line)) } }));
  // A Go import names a package: an edge to each of its files; an import resolving to nothing is kept with null.
  const imports = f.imports.flatMap((spec): CodeFileWrite['imports'] => {
    const targets = resolveSpec(spec);
    return targets.length ? targets.map((t) => ({ spec, resolved: rel(t) })) : [{ spec, resolved: null }];
  });
  return { path: r, mtimeMs: f.mtimeMs, size: f.size, lang: extname(f.path).slice(1), symbols: [fileSymbol, ...symbols], imports };
}
