/**
 * The knowledge commands as a user runs them: separate processes, exit codes,
 * JSON on stdout, errors on stderr; and the warm path through a daemon giving
 * the same answer as the in-process search.
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { installErrorHandler } from '../../src/api/errors.js';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeKnowhowFile } from '../helpers/knowledge.js';
import { gatherEmbeddingModel, SPECIAL_TOKENS } from '../helpers/onnx.js';
import { knowledgeRoutes } from '../../src/api/routes/knowledge.js';
import { INDEX_FILE } from '../../src/knowledge/index/store.js';
import { appendSpecEntry } from '../../src/knowledge/format/specWriter.js';
import { createKnowledgePool } from '../../src/knowledge/pool.js';
import { budget } from '../helpers/budget.js';
import { maestroArgs } from '../helpers/maestro.js';


function maestro(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...maestroArgs(), ...args], { env: { ...process.env, MAESTRO_SEARCH_DAEMON: 'off', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

// Many short-lived processes on a shared 2-core machine: generous time, no timing assertions.
describe('maestro search | load | spec | knowhow', { timeout: budget(240_000) }, () => {
  it('adds, searches, loads and reports health from the command line', async () => {
    const { dir } = tempRoot();
    const add = await maestro(['spec', 'add', 'coding', 'Prefer early returns', 'Return early to keep nesting shallow.', '--keywords', 'style,nesting', '--workflow-root', dir, '--json']);
    expect(add.code).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({ outcome: 'created', id: 'spec:project:coding-conventions-001' });
    const kh = await maestro(['knowhow', 'add', 'tip', 'Flatten nesting with guards', '--body', 'Use guard clauses.', '--keywords', 'nesting', '--workflow-root', dir, '--json']);
    expect(kh.code).toBe(0);
    // No --body and nothing on standard input (here /dev/null; a terminal is not read at all): refused, nothing written.
    const knowhowDir = join(dir, '.workflow', 'knowhow');
    const before = readdirSync(knowhowDir);
    const empty = await maestro(['knowhow', 'add', 'tip', 'Nothing said', '--workflow-root', dir]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('maestro: knowhow add needs a body: give it with --body <text>, or pipe the text on standard input. Nothing was written. [BAD_INPUT]');
    expect(readdirSync(knowhowDir)).toEqual(before);

    const probe = await maestro(['search', 'nesting', '--json', '--read-only-probe', '--workflow-root', dir]);
    expect(probe.code).toBe(0);
    expect(JSON.parse(probe.stdout).count).toBe(2);
    expect(existsSync(join(dir, '.workflow', INDEX_FILE))).toBe(false);

    const typed = await maestro(['search', 'nesting', '--type', 'knowhow', '--kg', '--json', '--workflow-root', dir]);
    expect(JSON.parse(typed.stdout).results.map((r: { sourceType: string }) => r.sourceType)).toEqual(['knowhow']);

    // A listing that finds nothing says so: a type no entry has (a typo), with the types there are.
    for (const args of [['load', '--type', 'tpi', '--list'], ['knowhow', 'list', '--type', 'tpi']]) {
      const none = await maestro([...args, '--workflow-root', dir]);
      expect(none.code, args.join(' ')).toBe(0);
      expect(none.stdout, args.join(' ')).toBe('');
      expect(none.stderr, args.join(' ')).toBe('maestro: no entry has type "tpi". The types here: knowhow, spec, tip.\n');
    }
    expect((await maestro(['load', '--type', 'tip', '--category', 'nowhere', '--workflow-root', dir])).stderr).toBe('maestro: no entry matches.\n');
    expect((await maestro(['knowhow', 'list', '--type', 'tip', '--workflow-root', dir])).stdout).toContain('Flatten nesting with guards');

    const load = await maestro(['load', '--id', 'spec:project:coding-conventions-001', '--json', '--workflow-root', dir]);
    expect(JSON.parse(load.stdout).entries[0].title).toBe('Prefer early returns');
    const unknown = await maestro(['load', '--id', 'spec:project:coding-convention-01', '--workflow-root', dir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Unknown knowledge id "spec:project:coding-convention-01"\. Nearest known ids: spec:project:coding-conventions-001/);

    writeFileSync(join(dir, '.workflow', 'specs', 'broken.md'), 'ok line\n<spec-entry category="coding" keywords="a" date="2026-01-01" title="open">\nnever closed\n');
    const health = await maestro(['spec', 'health', '--workflow-root', dir]);
    expect(health.code).toBe(1);
    expect(health.stdout).toContain(`${join(dir, '.workflow', 'specs', 'broken.md')}:2 unbalanced-tag`);
    // The rest of the corpus is still indexed.
    expect(JSON.parse((await maestro(['search', 'early', 'returns', '--json', '--workflow-root', dir])).stdout).count).toBe(1);

    const usage = await maestro(['search', 'x', '--limit', '0', '--workflow-root', dir]);
    expect(usage.code).toBe(2);
  });

  it('spec health names frontmatter that does not read as written (spec, knowhow, wiki) with file and line, and changes nothing', async () => {
    const { dir, root } = tempRoot();
    const spec = appendSpecEntry(root, { category: 'arch', title: 'Layers import downward', content: 'The api layer never imports the cli.', keywords: ['layering'] }).file;
    writeFileSync(spec, readFileSync(spec, 'utf8').replace('title: "Architecture Constraints"', 'title: [unterminated').replace(/^keywords:\n(?:  - .*\n)+/m, 'keywords: {bad json\n'));
    const knowhow = join(dir, '.workflow', 'knowhow', 'TIP-20260801-pool-size.md');
    mkdirSync(join(dir, '.workflow', 'knowhow'));
    writeFileSync(knowhow, '---\ntitle: Pool size\ntype: tip\nstatus: [deprecated]\ntags: {"pool": 1}\n---\n\nKeep the pgbouncer pool at ten.\n');
    const page = join(dir, 'wiki', 'knowledge', 'contexts', 'debug', 'C002-broken.md');
    mkdirSync(join(page, '..'), { recursive: true });
    writeFileSync(page, '---\nid: "C002"\nslug: "broken"\nrequest: [unterminated\ntags: {{{\ntype: "context"\n---\n\n# Broken pgbouncer page\n');
    const files = [spec, knowhow, page];
    const before = files.map((f) => readFileSync(f));

    const health = await maestro(['spec', 'health', '--kind', 'all', '--workflow-root', dir]);
    expect(health.stderr).toBe('');
    expect(health.code).toBe(0); // read, not as written: warnings
    expect(health.stdout.split('\n').filter((l) => l.includes('frontmatter') || l.includes('wiki-entry'))).toEqual([
      `warn  ${knowhow}:4 bad-frontmatter: status: expected text, got a list; the document reads as active, so search and briefs still offer it`,
      `warn  ${knowhow}:5 bad-frontmatter: tags: expected a list (or comma-separated text), got a map; its tags are not read, so search does not find the document by them`,
      `warn  ${spec}:2 bad-frontmatter: title: the value "[unterminated" opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)`,
      `warn  ${spec}:6 bad-frontmatter: keywords: the value "{bad json" opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)`,
      `warn  ${page}:4 wiki-entry-warning: request: the value "[unterminated" opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)`,
      `warn  ${page}:5 wiki-entry-warning: tags: the value "{{{" opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)`,
    ]);
    // As the findings say: each is still searched, the knowhow as active.
    const found = await maestro(['search', 'pgbouncer', '--json', '--workflow-root', dir]);
    const results = JSON.parse(found.stdout).results as Array<{ id: string; status: string }>;
    expect(results.map((r) => r.id).sort()).toEqual(['knowhow-tip-20260801-pool-size', 'wiki:C002']);
    expect(results.find((r) => r.id === 'knowhow-tip-20260801-pool-size')!.status).toBe('active');
    expect(files.map((f) => readFileSync(f))).toEqual(before);
  });

  it('spec add keeps a title holding </spec-entry> whole and refuses a confidence the readers would drop', async () => {
    const { dir } = tempRoot();
    const add = await maestro(['spec', 'add', 'coding', 'Evil </spec-entry> title', 'body', '--keywords', 'k', '--confidence', 'low', '--workflow-root', dir, '--json']);
    expect(add.code).toBe(0);
    const health = await maestro(['spec', 'health', '--workflow-root', dir]);
    expect(health.code).toBe(0);
    expect(health.stdout).toContain('1 entries, 0 error(s)');
    const load = await maestro(['load', '--id', 'spec:project:coding-conventions-001', '--json', '--workflow-root', dir]);
    expect(JSON.parse(load.stdout).entries[0]).toMatchObject({ title: 'Evil </spec-entry> title', body: expect.stringContaining('\n\nbody') });

    const file = join(dir, '.workflow', 'specs', 'coding-conventions.md');
    const before = readFileSync(file, 'utf8');
    for (const bad of ['extreme', 'low" status="deprecated', 'x>']) {
      const r = await maestro(['spec', 'add', 'coding', `Rule ${bad}`, 'body', '--keywords', 'k', '--confidence', bad, '--workflow-root', dir]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--confidence ${JSON.stringify(bad)} is not a spec confidence: use one of high|medium|low|contested. Nothing was written. [BAD_INPUT]`);
    }
    // A scope that is none of the four is named with the ones there are.
    const scope = await maestro(['spec', 'add', 'coding', 'Rule x', 'body', '--keywords', 'k', '--scope', 'galaxy', '--workflow-root', dir]);
    expect(scope.code).toBe(2);
    expect(scope.stderr).toContain(`option '--scope <scope>' argument 'galaxy' is invalid. Allowed choices are project, team, personal, global.`);
    expect(readFileSync(file, 'utf8')).toBe(before);
    const list = await maestro(['spec', 'list', '--json', '--workflow-root', dir]);
    expect(JSON.parse(list.stdout).entries.map((e: { title: string }) => e.title)).toEqual(['Evil </spec-entry> title']);
  });

  it('spec list says when it lists nothing, and refuses a category no entry can have instead of listing nothing', async () => {
    const { dir } = tempRoot();
    const W = ['--workflow-root', dir];
    const none = await maestro(['spec', 'list', ...W]);
    expect([none.code, none.stdout]).toEqual([0, '']);
    expect(none.stderr).toBe('maestro: no spec entry (deprecated ones are listed with --include-deprecated). `maestro spec add <category> <title> <content> --keywords <list>` adds one.\n');
    expect((await maestro(['spec', 'add', 'coding', 'Prefer early returns', 'Return early.', '--keywords', 'style', ...W])).code).toBe(0);
    const other = await maestro(['spec', 'list', '--category', 'test', ...W]);
    expect([other.code, other.stdout]).toEqual([0, '']);
    expect(other.stderr).toContain('maestro: no spec entry in category test (deprecated ones');
    const typo = await maestro(['spec', 'list', '--category', 'codng', ...W]);
    expect([typo.code, typo.stdout]).toEqual([2, '']);
    expect(typo.stderr).toContain("option '--category <category>' argument 'codng' is invalid. Allowed choices are coding, arch, debug, test, review, learning, ui.");
    const listed = await maestro(['spec', 'list', '--category', 'coding', ...W]);
    expect([listed.code, listed.stdout, listed.stderr]).toEqual([0, 'spec:project:coding-conventions-001  [spec]  Prefer early returns\n', '']);
  });

  it('spec add refuses a spec file or folder that is a symbolic link leading out of .workflow/', async () => {
    const { dir } = tempRoot();
    const outside = tempRoot().dir; // another temporary folder, outside this project
    const specs = join(dir, '.workflow', 'specs');
    mkdirSync(specs);
    writeFileSync(join(outside, 'outside-spec.md'), 'outside\n');
    symlinkSync(join(outside, 'outside-spec.md'), join(specs, 'architecture-constraints.md'));
    const file = await maestro(['spec', 'add', 'arch', 'Layering', 'body', '--keywords', 'k', '--workflow-root', dir]);
    expect(file.code).toBe(2);
    expect(file.stderr).toContain(`Refusing to write ${join(specs, 'architecture-constraints.md')}: it is a symbolic link`);
    expect(readFileSync(join(outside, 'outside-spec.md'), 'utf8')).toBe('outside\n');
    expect(lstatSync(join(specs, 'architecture-constraints.md')).isSymbolicLink()).toBe(true);

    const outsideDir = join(outside, 'outside-dir');
    mkdirSync(outsideDir);
    rmSync(specs, { recursive: true });
    symlinkSync(outsideDir, specs);
    const folder = await maestro(['spec', 'add', 'coding', 'Naming', 'body', '--keywords', 'k', '--workflow-root', dir]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(`${specs} is a symbolic link leading to ${join(realpathSync(outsideDir), 'coding-conventions.md')}, outside the project's ${join(dir, '.workflow')}`);
    expect(readdirSync(outsideDir)).toEqual([]);
    expect(lstatSync(specs).isSymbolicLink()).toBe(true);
  });

  it('searches, loads and health-checks the observer wiki from the command line', async () => {
    const { dir } = tempRoot();
    const entryDir = join(dir, 'wiki', 'knowledge', 'entities');
    mkdirSync(entryDir, { recursive: true });
    writeFileSync(
      join(entryDir, 'N001-postgres-pool.md'),
      '---\nid: "N001"\nrequest: "what is the postgres pool"\ntype: entity\ntags: [postgres]\nstatus: "active"\n---\n\n# Postgres connection pool\n\n## 摘要\nTen pooled connections behind pgbouncer.\n',
    );
    writeFileSync(join(entryDir, 'N002-broken.md'), '# no frontmatter, pgbouncer\n');
    const search = await maestro(['search', 'pgbouncer', '--type', 'wiki', '--json', '--workflow-root', dir]);
    expect(search.code).toBe(0);
    expect(JSON.parse(search.stdout).results.map((r: { id: string; kind: string }) => [r.id, r.kind])).toEqual([['wiki:N001', 'wiki']]);
    const load = await maestro(['load', '--id', 'N001', '--json', '--workflow-root', dir]);
    expect(JSON.parse(load.stdout).entries[0]).toMatchObject({ id: 'wiki:N001', type: 'entity', title: 'Postgres connection pool' });
    const health = await maestro(['spec', 'health', '--kind', 'wiki', '--workflow-root', dir]);
    expect(health.code).toBe(1);
    expect(health.stdout).toContain(`${join(entryDir, 'N002-broken.md')}:1 wiki-entry-unreadable`);
    expect((await maestro(['spec', 'health', '--workflow-root', dir])).code).toBe(0); // spec health alone is not about the wiki
  });

  it('mixes local ONNX vectors into a search when MAESTRO_EMBEDDINGS_ONNX names a model', async () => {
    const { dir, root } = tempRoot();
    writeKnowhowFile(root, 'TIP-20260801-automobile', { title: 'Automobile maintenance' }, 'Check the automobile tyres.');
    writeKnowhowFile(root, 'TIP-20260801-deploy', { title: 'Deploy checklist' }, 'Deploy on Tuesdays.');
    const vocab = [...SPECIAL_TOKENS, 'car', 'automobile', 'deploy'];
    const model = join(dir, 'model');
    mkdirSync(model);
    writeFileSync(join(model, 'model.onnx'), gatherEmbeddingModel(vocab.map((t) => (t === 'car' || t === 'automobile' ? [1, 0, 0.1] : t === 'deploy' ? [0, 1, 0.1] : [0, 0, 0.1]))));
    writeFileSync(join(model, 'vocab.txt'), vocab.join('\n'));
    const lexical = await maestro(['search', 'car', '--json', '--workflow-root', dir]);
    expect(JSON.parse(lexical.stdout)).toMatchObject({ count: 0, retrieval: 'lexical' });
    const hybrid = await maestro(['search', 'car', '--json', '--workflow-root', dir], { MAESTRO_EMBEDDINGS_ONNX: join(model, 'model.onnx') });
    expect(hybrid.code).toBe(0);
    const body = JSON.parse(hybrid.stdout) as { retrieval: string; results: Array<{ id: string }> };
    expect(body.retrieval).toBe('hybrid');
    expect(body.results[0]!.id).toBe('knowhow-tip-20260801-automobile');
    const bad = await maestro(['search', 'car', '--workflow-root', dir], { MAESTRO_EMBEDDINGS_ONNX: join(model, 'missing.onnx') });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${join(model, 'missing.onnx')}, which is not a file`);
  });

  it('answers through a running daemon with the same results as in process', async () => {
    const { dir } = tempRoot('mf-workflow');
    const local = await maestro(['search', 'errors', 'imports', 'install', '--json', '--read-only-probe', '--workflow-root', dir]);
    const pool = createKnowledgePool({ env: process.env });
    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await app.register(knowledgeRoutes, { pool });
    let hits = 0;
    app.addHook('onRequest', async () => {
      hits++;
    });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const warm = await maestro(['search', 'errors', 'imports', 'install', '--json', '--workflow-root', dir], { MAESTRO_URL: url, MAESTRO_SEARCH_DAEMON: 'on' });
      expect(warm.code).toBe(0);
      expect(hits).toBe(1);
      const strip = (s: string) => (JSON.parse(s) as { results: unknown[] }).results;
      expect(strip(warm.stdout)).toEqual(strip(local.stdout));
    } finally {
      await app.close();
      pool.stop();
    }
    // No daemon answering: the CLI falls back to searching in process.
    const cold = await maestro(['search', 'errors', '--json', '--workflow-root', dir], { MAESTRO_URL: 'http://127.0.0.1:9', MAESTRO_SEARCH_DAEMON: 'on' });
    expect(cold.code).toBe(0);
    expect(JSON.parse(cold.stdout).count).toBeGreaterThan(0);
  });
});
