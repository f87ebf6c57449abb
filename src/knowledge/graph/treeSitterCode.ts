/**
 * The code graph beyond TypeScript/JavaScript: Python, Go, Rust, Java and
 * Ruby read with tree-sitter grammars compiled to WebAssembly. Runtime and
 * grammars come from one npm package, `@vscode/tree-sitter-wasm` (web-tree-
 * sitter 0.25 plus grammars built by the same tree-sitter CLI, so the wasm ABI
 * always matches; no install script, nothing downloaded, no native build).
 * Loaded on first use only: a search that does not build the code graph
 * never loads it.
 *
 * What counts as exported (the "top-level exported symbols" of the graph):
 * - Python: top-level `def`, `class` (decorated too) and `NAME = …` whose
 *   name does not start with `_`; imports from `import` / `from … import`.
 * - Go: top-level funcs, methods (`Type.Method`), types, consts and vars
 *   whose name starts with an upper-case letter; imports are package paths,
 *   resolved to the package's files through the root `go.mod`.
 * - Rust: top-level items declared exactly `pub` (fn, struct, enum, trait,
 *   type, const, static, mod); imports are `use` paths and `mod x;`
 *   declarations (resolved to x.rs or x/mod.rs).
 * - Java: top-level `public` classes, interfaces, enums and records; imports
 *   resolved to the project's file for that class when there is one.
 * - Ruby: top-level `class`, `module`, `def` and `CONSTANT =`; imports are
 *   `require` / `require_relative` (the latter resolved next to the file).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import type { CodeSymbol, ParsedCodeFile } from './codeFile.js';

export type TreeSitterLang = 'python' | 'go' | 'rust' | 'java' | 'ruby';

export const TREE_SITTER_EXT: Readonly<Record<string, TreeSitterLang>> = { '.py': 'python', '.go': 'go', '.rs': 'rust', '.java': 'java', '.rb': 'ruby' };

type TS = typeof import('@vscode/tree-sitter-wasm');
type Node = import('@vscode/tree-sitter-wasm').Node;
type Parser = import('@vscode/tree-sitter-wasm').Parser;

let runtime: Promise<{ mod: TS; dir: string }> | null = null;
const parsers = new Map<TreeSitterLang, Promise<Parser>>();

function loadRuntime(): Promise<{ mod: TS; dir: string }> {
  runtime ??= (async () => {
    try {
      const require = createRequire(import.meta.url);
      const entry = require.resolve('@vscode/tree-sitter-wasm');
      const mod = require('@vscode/tree-sitter-wasm') as TS;
      const dir = dirname(entry);
      await mod.Parser.init({ locateFile: (file: string) => join(dir, file) });
      return { mod, dir };
    } catch (err) {
      runtime = null;
      throw new MaestroError('CONFIG_INVALID', `The code graph for Python, Go, Rust, Java and Ruby needs the "@vscode/tree-sitter-wasm" package, which could not be loaded: ${(err as Error).message}`);
    }
  })();
  return runtime;
}

/** A parser for a language (grammar loaded once per process). */
export function parserFor(lang: TreeSitterLang): Promise<Parser> {
  let p = parsers.get(lang);
  if (!p) {
    p = loadRuntime().then(async ({ mod, dir }) => {
      const language = await mod.Language.load(join(dir, `tree-sitter-${lang}.wasm`));
      const parser = new mod.Parser();
      parser.setLanguage(language);
      return parser;
    });
    p.catch(() => parsers.delete(lang));
    parsers.set(lang, p);
  }
  return p;
}

const named = (n: Node | null | undefined): Node[] => (n ? (n.namedChildren.filter(Boolean) as Node[]) : []);
const lineOf = (n: Node) => n.startPosition.row + 1;
const sig = (n: Node) => n.text.split('\n')[0]!.slice(0, 160);
const field = (n: Node, f: string) => n.childForFieldName(f);
const unquote = (s: string) => s.replace(/^["'`]|["'`]$/g, '');

function python(root: Node): ParsedCodeFile {
  const symbols: CodeSymbol[] = [];
  const imports: string[] = [];
  const add = (name: string | undefined, kind: string, at: Node) => {
    if (name && !name.startsWith('_')) symbols.push({ name, kind, line: lineOf(at), signature: sig(at) });
  };
  for (const top of named(root)) {
    const d = top.type === 'decorated_definition' ? (field(top, 'definition') ?? top) : top;
    if (d.type === 'function_definition') add(field(d, 'name')?.text, 'function', d);
    else if (d.type === 'class_definition') add(field(d, 'name')?.text, 'class', d);
    else if (d.type === 'expression_statement') {
      const a = named(d)[0];
      const left = a?.type === 'assignment' ? field(a, 'left') : null;
      if (left?.type === 'identifier') add(left.text, 'variable', d);
    } else if (d.type === 'import_statement') {
      for (const c of named(d)) imports.push(c.type === 'aliased_import' ? (field(c, 'name')?.text ?? c.text) : c.text);
    } else if (d.type === 'import_from_statement') {
      const m = field(d, 'module_name')?.text;
      if (!m) continue;
      // `from . import x` imports the module `.x`.
      if (/^\.+$/.test(m)) for (const n of d.childrenForFieldName('name')) imports.push(`${m}${(n && (n.type === 'aliased_import' ? field(n, 'name')?.text : n.text)) ?? ''}`);
      else imports.push(m);
    }
  }
  return { symbols, imports: [...new Set(imports)] };
}

const exportedGo = (name: string | undefined) => Boolean(name && /^\p{Lu}/u.test(name));

function go(root: Node): ParsedCodeFile {
  const symbols: CodeSymbol[] = [];
  const imports: string[] = [];
  const add = (name: string | undefined, kind: string, at: Node) => {
    if (exportedGo(name)) symbols.push({ name: name!, kind, line: lineOf(at), signature: sig(at) });
  };
  const specs = (n: Node, type: string): Node[] => named(n).flatMap((c) => (c.type === type ? [c] : c.type.endsWith('_list') ? specs(c, type) : []));
  for (const top of named(root)) {
    if (top.type === 'import_declaration') {
      for (const s of specs(top, 'import_spec')) {
        const p = field(s, 'path');
        if (p) imports.push(unquote(p.text));
      }
    } else if (top.type === 'function_declaration') add(field(top, 'name')?.text, 'function', top);
    else if (top.type === 'method_declaration') {
      const name = field(top, 'name')?.text;
      // The receiver's type name, without pointer or type parameters: `func (s *Store[T]) Get()` → Store.Get.
      const recv = /([\p{L}_][\p{L}\p{N}_]*)\s*(?:\[[^\]]*\])?\s*\)\s*$/u.exec(field(top, 'receiver')?.text ?? '')?.[1];
      if (exportedGo(name)) symbols.push({ name: recv ? `${recv}.${name}` : name!, kind: 'method', line: lineOf(top), signature: sig(top) });
    } else if (top.type === 'type_declaration') {
      for (const s of named(top).filter((c) => c.type === 'type_spec' || c.type === 'type_alias')) {
        const t = field(s, 'type')?.type;
        add(field(s, 'name')?.text, t === 'struct_type' ? 'struct' : t === 'interface_type' ? 'interface' : 'type', s);
      }
    } else if (top.type === 'const_declaration' || top.type === 'var_declaration') {
      for (const s of specs(top, top.type === 'const_declaration' ? 'const_spec' : 'var_spec')) for (const n of s.childrenForFieldName('name')) if (n) add(n.text, top.type === 'const_declaration' ? 'const' : 'variable', s);
    }
  }
  return { symbols, imports: [...new Set(imports)] };
}

const RUST_KINDS: Record<string, string> = { function_item: 'function', struct_item: 'struct', enum_item: 'enum', trait_item: 'trait', type_item: 'type', const_item: 'const', static_item: 'variable', mod_item: 'module', union_item: 'struct' };

function rust(root: Node): ParsedCodeFile {
  const symbols: CodeSymbol[] = [];
  const imports: string[] = [];
  for (const top of named(root)) {
    if (top.type === 'use_declaration') {
      const arg = field(top, 'argument');
      if (arg) imports.push(arg.text.replace(/\s+/g, ''));
      continue;
    }
    if (top.type === 'mod_item' && !field(top, 'body')) {
      const name = field(top, 'name')?.text;
      if (name) imports.push(`mod:${name}`);
    }
    const kind = RUST_KINDS[top.type];
    if (!kind) continue;
    const vis = named(top).find((c) => c.type === 'visibility_modifier');
    if (vis?.text !== 'pub') continue;
    const name = field(top, 'name')?.text;
    if (name) symbols.push({ name, kind, line: lineOf(top), signature: sig(top) });
  }
  return { symbols, imports: [...new Set(imports)] };
}

const JAVA_KINDS: Record<string, string> = { class_declaration: 'class', interface_declaration: 'interface', enum_declaration: 'enum', record_declaration: 'class', annotation_type_declaration: 'interface' };

function java(root: Node): ParsedCodeFile {
  const symbols: CodeSymbol[] = [];
  const imports: string[] = [];
  for (const top of named(root)) {
    if (top.type === 'import_declaration') {
      const spec = top.text.replace(/^import\s+/, '').replace(/;\s*$/, '').replace(/\s+/g, ' ').trim();
      imports.push(spec);
      continue;
    }
    const kind = JAVA_KINDS[top.type];
    if (!kind) continue;
    const mods = named(top).find((c) => c.type === 'modifiers');
    if (!mods || !/\bpublic\b/.test(mods.text)) continue;
    const name = field(top, 'name')?.text;
    if (name) symbols.push({ name, kind, line: lineOf(top), signature: sig(top).replace(/^(@\S+\s+)+/, '') });
  }
  return { symbols, imports: [...new Set(imports)] };
}

function ruby(root: Node): ParsedCodeFile {
  const symbols: CodeSymbol[] = [];
  const imports: string[] = [];
  for (const top of named(root)) {
    if (top.type === 'class' || top.type === 'module') {
      const name = field(top, 'name')?.text;
      if (name) symbols.push({ name, kind: top.type === 'class' ? 'class' : 'module', line: lineOf(top), signature: sig(top) });
    } else if (top.type === 'method') {
      const name = field(top, 'name')?.text;
      if (name && !name.startsWith('_')) symbols.push({ name, kind: 'function', line: lineOf(top), signature: sig(top) });
    } else if (top.type === 'assignment' && field(top, 'left')?.type === 'constant') {
      symbols.push({ name: field(top, 'left')!.text, kind: 'const', line: lineOf(top), signature: sig(top) });
    } else if (top.type === 'call') {
      const method = field(top, 'method')?.text;
      const arg = named(field(top, 'arguments'))[0];
      if ((method === 'require' || method === 'require_relative') && arg?.type === 'string') {
        const path = named(arg).find((c) => c.type === 'string_content')?.text;
        if (path) imports.push(method === 'require_relative' ? `relative:${path}` : path);
      }
    }
  }
  return { symbols, imports: [...new Set(imports)] };
}

const EXTRACT: Record<TreeSitterLang, (root: Node) => ParsedCodeFile> = { python, go, rust, java, ruby };

export async function parseTreeSitterFile(lang: TreeSitterLang, text: string): Promise<ParsedCodeFile> {
  const parser = await parserFor(lang);
  const tree = parser.parse(text);
  if (!tree) return { symbols: [], imports: [] };
  try {
    const parsed = EXTRACT[lang](tree.rootNode);
    // A name defined twice (a redefinition, an `if` branch) is one symbol: the first definition.
    const seen = new Set<string>();
    return { ...parsed, symbols: parsed.symbols.filter((s) => !seen.has(s.name) && seen.add(s.name)) };
  } finally {
    tree.delete();
  }
}

/** Context for resolving imports to project files: every indexed path, and the Go module path. */
export interface ResolveContext {
  projectDir: string;
  known: Set<string>;
  goModule: string | null;
  /** Java files by basename, for `a.b.C` → …/a/b/C.java. */
  javaByName: Map<string, string[]>;
}

export function resolveContext(projectDir: string, known: Set<string>): ResolveContext {
  let goModule: string | null = null;
  const gomod = join(projectDir, 'go.mod');
  if (existsSync(gomod)) {
    try {
      goModule = /^module\s+(\S+)/m.exec(readFileSync(gomod, 'utf8'))?.[1] ?? null;
    } catch {
      goModule = null;
    }
  }
  const javaByName = new Map<string, string[]>();
  for (const p of known) {
    if (!p.endsWith('.java')) continue;
    const b = basename(p);
    javaByName.set(b, [...(javaByName.get(b) ?? []), p]);
  }
  return { projectDir, known, goModule, javaByName };
}

/** Project files an import refers to (absolute paths); [] for a third-party or standard-library import. */
export function resolveTreeSitterImport(lang: TreeSitterLang, fromFile: string, spec: string, ctx: ResolveContext): string[] {
  const first = (cands: string[]) => {
    const hit = cands.find((c) => ctx.known.has(c));
    return hit ? [hit] : [];
  };
  if (lang === 'python') {
    const dots = /^\.*/.exec(spec)![0].length;
    const rest = spec.slice(dots).replace(/\./g, '/');
    if (dots > 0) {
      let base = dirname(fromFile);
      for (let i = 1; i < dots; i++) base = dirname(base);
      const stem = rest ? join(base, rest) : base;
      return first([`${stem}.py`, join(stem, '__init__.py')]);
    }
    return first([ctx.projectDir, join(ctx.projectDir, 'src')].flatMap((b) => [join(b, `${rest}.py`), join(b, rest, '__init__.py')]));
  }
  if (lang === 'go') {
    const m = ctx.goModule;
    if (!m || (spec !== m && !spec.startsWith(`${m}/`))) return [];
    const dir = resolve(ctx.projectDir, spec.slice(m.length + 1));
    return [...ctx.known].filter((p) => p.endsWith('.go') && !p.endsWith('_test.go') && dirname(p) === dir).sort();
  }
  if (lang === 'rust') {
    if (!spec.startsWith('mod:')) return [];
    const name = spec.slice(4);
    const dir = basename(fromFile) === 'mod.rs' || basename(fromFile) === 'lib.rs' || basename(fromFile) === 'main.rs' ? dirname(fromFile) : join(dirname(fromFile), basename(fromFile, '.rs'));
    return first([join(dir, `${name}.rs`), join(dir, name, 'mod.rs')]);
  }
  if (lang === 'ruby') {
    if (!spec.startsWith('relative:')) return [];
    const base = resolve(dirname(fromFile), spec.slice('relative:'.length));
    return first([base, `${base}.rb`]);
  }
  // Java: `a.b.C`, `static a.b.C.member`, `a.b.*` (a package: not a file).
  const parts = spec.replace(/^static\s+/, '').split('.');
  for (let end = parts.length; end > 0; end--) {
    const cls = parts[end - 1]!;
    if (!/^\p{Lu}/u.test(cls)) continue;
    const suffix = `/${parts.slice(0, end).join('/')}.java`;
    const hit = (ctx.javaByName.get(`${cls}.java`) ?? []).find((p) => p.endsWith(suffix));
    return hit ? [hit] : [];
  }
  return [];
}

export function relPath(projectDir: string, p: string): string {
  return relative(projectDir, p).split('\\').join('/');
}
