#!/usr/bin/env node
/**
 * Measures the "small units" rule of issue 14: no source file over 400 lines, no function over
 * about 80. Lists the source files (not tests, not test fixtures) over the file limit and every
 * function, method, constructor, accessor and arrow function over the function limit, longest
 * first, then the two counts.
 *
 *   npm run sizes                                # src/ and web/src/ (the daemon and the board)
 *   npm run sizes -- --max-file 300 --max-function 60
 *   node scripts/sizes.mjs src/store             # other folders (src/ when none is named)
 *
 * A function's lines run from its first token to its closing brace, comments inside included; a
 * nested function counts in its own right and inside the one that holds it. Always exits 0: it
 * measures, it does not gate.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
let maxFile = 400;
let maxFunction = 80;
const roots = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--max-file' || a === '--max-function') {
    const n = Number(args[++i]);
    if (!Number.isInteger(n) || n <= 0) {
      process.stderr.write(`sizes: ${a} needs a positive whole number of lines, got ${JSON.stringify(args[i] ?? '')}\n`);
      process.exit(2);
    }
    if (a === '--max-file') maxFile = n;
    else maxFunction = n;
  } else roots.push(a);
}
if (!roots.length) roots.push('src');

const isSource = (name) => /\.(ts|tsx|mts|cts)$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts');
const skipDir = (name) => name === 'node_modules' || name === '__fixtures__' || name === 'dist';

function* walk(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    process.stderr.write(`sizes: cannot read ${dir}: ${err.message}\n`);
    process.exit(2);
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory()) {
      if (!skipDir(e.name)) yield* walk(join(dir, e.name));
    } else if (e.isFile() && isSource(e.name)) yield join(dir, e.name);
  }
}

/** A readable name for a function node: `Class.method`, `name`, or `(arrow) in name`. */
function nameOf(node, sf) {
  const own = node.name && ts.isIdentifier(node.name) ? node.name.text : node.name ? node.name.getText(sf) : null;
  let holder = null;
  for (let p = node.parent; p; p = p.parent) {
    if ((ts.isClassDeclaration(p) || ts.isClassExpression(p)) && p.name) { holder = p.name.text; break; }
    if (ts.isFunctionDeclaration(p) && p.name) { holder = p.name.text; break; }
    if (ts.isVariableDeclaration(p) && ts.isIdentifier(p.name)) { holder = p.name.text; break; }
    if (ts.isPropertyAssignment(p) && !own) { holder = p.name.getText(sf); break; }
  }
  if (ts.isConstructorDeclaration(node)) return `${holder ?? '?'}.constructor`;
  if (own && (ts.isMethodDeclaration(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node))) return holder ? `${holder}.${own}` : own;
  if (own) return own;
  if (ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name)) return node.parent.name.text;
  return `(anonymous) in ${holder ?? 'module'}`;
}

const isFunction = (n) =>
  ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) ||
  ts.isConstructorDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n);

const bigFiles = [];
const bigFunctions = [];
let files = 0;
let functions = 0;
for (const root of roots) {
  for (const file of walk(root)) {
    files++;
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const rel = relative(process.cwd(), file);
    if (lines > maxFile) bigFiles.push({ rel, lines });
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (node) => {
      if (isFunction(node) && node.body) {
        functions++;
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        const n = end - start + 1;
        if (n > maxFunction) bigFunctions.push({ rel, line: start + 1, name: nameOf(node, sf), lines: n });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}

bigFiles.sort((a, b) => b.lines - a.lines);
bigFunctions.sort((a, b) => b.lines - a.lines);
process.stdout.write(`Source files over ${maxFile} lines (${roots.join(', ')}; tests excluded):\n`);
for (const f of bigFiles) process.stdout.write(`  ${String(f.lines).padStart(5)}  ${f.rel}\n`);
process.stdout.write(`\nFunctions over ${maxFunction} lines:\n`);
for (const f of bigFunctions) process.stdout.write(`  ${String(f.lines).padStart(5)}  ${f.rel}:${f.line}  ${f.name}\n`);
process.stdout.write(`\n${bigFiles.length} of ${files} files over ${maxFile} lines; ${bigFunctions.length} of ${functions} functions over ${maxFunction} lines.\n`);
