/**
 * The scriptable path, as a process: `maestro observe --once --json` finds the
 * session Claude Code wrote for this repository (CLAUDE_CONFIG_DIR, the
 * encoded project folder, FLOW_SESSION_ID or the newest with a user line),
 * updates bundle and index, and prints the explorations; `maestro wiki …`
 * reports through exit codes.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, writeEntry, type TempDir } from '../../src/observer/__fixtures__/transcript-builder.js';
import { encodeProjectPath, locateSession } from '../../src/observer/paths.js';
import { budget } from '../helpers/budget.js';
import { maestroArgs } from '../helpers/maestro.js';

const run = promisify(execFile);

let dir: TempDir;
let repo: string;
let claude: string;
beforeEach(async () => {
  dir = tempDir();
  repo = join(dir.path, 'my_repo.v2');
  mkdirSync(repo);
  await run('git', ['init', '-q'], { cwd: repo });
  claude = join(dir.path, 'claude');
});
afterEach(() => dir.cleanup());

function projectDir(): string {
  return join(claude, 'projects', encodeProjectPath(repo));
}

async function maestro(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    // From the run's build (maestroArgs), as the other suites start the CLI: through tsx each start cost 0.7 CPU s more.
    const { stdout, stderr } = await run(process.execPath, [...maestroArgs(), ...args], { cwd: repo, env: { ...process.env, CLAUDE_CONFIG_DIR: claude, FLOW_SESSION_ID: '', ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('session discovery', () => {
  it('encodes the project path and picks FLOW_SESSION_ID, else the newest file with a user line', () => {
    expect(encodeProjectPath('/home/a/my_repo')).toBe('-home-a-my-repo');
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder().user('old question').writeTo(join(projectDir(), 'old.jsonl'));
    writeFileSync(join(projectDir(), 'newest-no-user.jsonl'), '{"type":"summary","summary":"x"}\n');
    writeFileSync(join(projectDir(), 'agent_123.jsonl'), new TranscriptBuilder().user('sub-agent').take());
    utimesSync(join(projectDir(), 'old.jsonl'), new Date(1_000_000), new Date(1_000_000));
    const env = { CLAUDE_CONFIG_DIR: claude };
    expect(locateSession({ env, workspaceRoot: repo }).sessionId).toBe('old');
    expect(locateSession({ env: { ...env, FLOW_SESSION_ID: 'newest-no-user' }, workspaceRoot: repo }).sessionId).toBe('newest-no-user');
    expect(() => locateSession({ env, workspaceRoot: repo, session: 'missing' })).toThrow(/Session "missing" not found/);
    // Files there, none with a user line: the error counts them instead of reading as if the folder were empty.
    const other = join(claude, 'projects', encodeProjectPath(join(dir.path, 'other')));
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'only-summary.jsonl'), '{"type":"summary","summary":"x"}\n');
    writeFileSync(join(other, 'spaced.jsonl'), '{"type": "user", "message": {"content": "hi"}}\n');
    expect(() => locateSession({ env, workspaceRoot: join(dir.path, 'other') })).toThrow(`No Claude Code session with a user line in ${other} (2 transcripts there, none with a {"type":"user"} line in its first 8 KiB or last 4 KiB); start`);
    // A Maestro run's transcript, by run id.
    const run = join(repo, '.workflow', 'sessions', 'S1', 'runs', 'R7', 'transcript.jsonl');
    new TranscriptBuilder().user('plan the task').writeTo(run);
    expect(locateSession({ env, workspaceRoot: repo, session: 'R7' })).toMatchObject({ sessionId: 'R7', path: run });
  });
});

describe('maestro observe --once and maestro wiki, as processes', () => {
  it('observes the newest session and prints JSON; wiki audit / lint / maintain answer with exit codes', async () => {
    // No wiki yet: maintain refuses, and makes none.
    const noWiki = await maestro(['wiki', 'maintain']);
    expect(noWiki.code).toBe(2);
    expect(noWiki.stderr).toContain(`There is no wiki at ${join(repo, 'wiki')} (the folder's wiki/, or FLOW_WIKI_DIR / FLOW_ROOT_DIR): nothing to maintain, and nothing was written.`);
    expect(existsSync(join(repo, 'wiki'))).toBe(false);
    // Nor does lint pass a wiki that is not there.
    const noLint = await maestro(['wiki', 'lint']);
    expect([noLint.code, noLint.stdout]).toEqual([2, '']);
    expect(noLint.stderr).toContain(`There is no wiki at ${join(repo, 'wiki')} (the folder's wiki/, or FLOW_WIKI_DIR / FLOW_ROOT_DIR): nothing to lint, and nothing was written.`);
    expect(existsSync(join(repo, 'wiki'))).toBe(false);
    // The project slug: basename "my_repo.v2", lowercased, [^\w]+ → "-".
    writeEntry(join(repo, 'wiki'), 'contexts/debug/C001-retry.md', { id: '"C001"', request: '"Where the retry policy is defined"', tags: ['proj:my_repo-v2'] }, '## 摘要\n\nsrc/retry.ts\n');
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder().user('where is the retry policy defined').turn({ tools: [{ name: 'Grep', input: { pattern: 'retry' } }], answer: 'src/retry.ts' }).writeTo(join(projectDir(), 'abc.jsonl'));

    // A first pass: nothing was cached; the bundle is built and written (it said "bundle hit").
    const first = await maestro(['observe', '--once']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('bundle built from the transcript and written (none was cached) · 1 exploration');
    rmSync(join(repo, 'wiki/sessions/abc'), { recursive: true });
    const once = await maestro(['observe', '--once', '--json']);
    expect(once.code).toBe(0);
    const out = JSON.parse(once.stdout);
    // Written in this pass: the view says so (it used to keep saying "miss"), and what it found first.
    expect(out.session).toMatchObject({ sessionId: 'abc', workspaceRoot: repo, load: { status: 'hit', found: { status: 'miss', reason: 'bundle_not_found' } }, hold: null });
    expect(out.session.explorations[0]).toMatchObject({ id: 'exp_1', status: 'complete', knowledge: { entryId: 'C001' } });
    expect(existsSync(join(repo, 'wiki/sessions/abc/bundle.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(repo, 'wiki/sessions/_index.json'), 'utf8')).lastSessionId).toBe('abc');

    // Read from the cache this time: a hit.
    const text = await maestro(['observe', '--once']);
    expect(text.stdout).toContain('bundle hit · 1 exploration');
    expect(text.stdout).toContain('KNOWLEDGE C001 Where the retry policy is defined');

    const bad = await maestro(['wiki', 'audit', 'C001', '--severity', 'urgent']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--severity must be low, medium or high');
    const audit = await maestro(['wiki', 'audit', 'C001', '--severity', 'high', '--json']);
    expect(audit.code).toBe(0);
    expect(JSON.parse(audit.stdout)).toMatchObject({ targetId: 'C001', severity: 'high', status: 'open' });
    const list = await maestro(['wiki', 'maintain', '--list-audits', '--json']);
    expect(JSON.parse(list.stdout).open).toHaveLength(1);
    // A file in the audit folder that is no audit is named, with why, not passed over.
    const stray = join(dirname(JSON.parse(audit.stdout).path), 'stray.md');
    writeFileSync(stray, 'notes with no frontmatter\n');
    const listed = await maestro(['wiki', 'maintain', '--list-audits']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^1 open\n/);
    expect(listed.stderr).toContain(`1 audit file(s) could not be read; fix or remove them by hand:\n  ${stray}: it has no frontmatter`);
    rmSync(stray);

    const lint = await maestro(['wiki', 'lint']);
    expect(lint.code).toBe(1); // C001 is not in index.md yet
    expect(lint.stdout).toContain('not_in_index');
    const apply = await maestro(['wiki', 'maintain']);
    expect(apply.code).toBe(0);
    expect(apply.stdout).toMatch(/index rebuilt \(1 entries\)/);
    expect((await maestro(['wiki', 'lint'])).code).toBe(0);

    const none = await maestro(['observe', '--once', '--session', 'nope']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Session "nope" not found');
  }, budget(180_000)); // nine CLI processes through tsx on a shared 2-core machine
});

describe('maestro observe --once without an agent', () => {
  it('says in words why a question was not curated into the wiki, and how to have entries written', async () => {
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder()
      .user('Fix the retry policy giving up after one attempt')
      .turn({ tools: [{ name: 'Edit', input: { file_path: 'src/retry.ts' } }], answer: 'maxAttempts is 5 now.' })
      .writeTo(join(projectDir(), 'no-agent.jsonl'));
    const once = await maestro(['observe', '--once'], { MAESTRO_OBSERVER_AGENT: '' });
    expect(once.code).toBe(0);
    const lines = once.stdout.split('\n');
    const at = lines.indexOf('  wiki skipped · skill_only_no_prior');
    expect(at, once.stdout).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('    (no agent: the rules only propose updates to wiki entries that exist, never create one; set MAESTRO_OBSERVER_AGENT (or --agent) to have entries written)');
    expect(existsSync(join(repo, 'wiki', 'knowledge', 'contexts'))).toBe(false);
  }, budget(60_000));
});

describe('what maestro observe leaves in the repository', () => {
  it("keeps the session's bundle and index (the person's prompts) out of git status, through .git/info/exclude; a curated entry stays listed", async () => {
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder().user('my private question about the retry policy').turn({ answer: 'src/retry.ts' }).writeTo(join(projectDir(), 'mine.jsonl'));
    writeEntry(join(repo, 'wiki'), 'contexts/debug/C001-retry.md', { id: '"C001"', request: '"Where the retry policy is defined"' }, '## 摘要\n\nsrc/retry.ts\n');
    const once = await maestro(['observe', '--once'], { MAESTRO_OBSERVER_AGENT: '', FLOW_WIKI_DIR: '', FLOW_ROOT_DIR: '', FLOW_PROJECT_DIR: '' });
    expect(once.code, once.stderr).toBe(0);
    expect(readFileSync(join(repo, 'wiki/sessions/mine/bundle.json'), 'utf8')).toContain('my private question');
    expect(existsSync(join(repo, 'wiki/sessions/_index.json'))).toBe(true);
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo, encoding: 'utf8' });
    expect(status.split('\n').filter((l) => l.includes('wiki/sessions'))).toEqual([]);
    expect(status).toContain('?? wiki/knowledge/contexts/debug/C001-retry.md');
    expect(readFileSync(join(repo, '.git/info/exclude'), 'utf8')).toContain('\n/wiki/sessions/\n');
  }, budget(60_000));
});

describe('maestro observe in a subfolder of the repository', () => {
  it("says that its wiki and project tag are the subfolder's, not the ones the project's search reads, and how to use the repository's", async () => {
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder().user('where is the retry policy defined').turn({ answer: 'src/retry.ts' }).writeTo(join(projectDir(), 'sub.jsonl'));
    const sub = join(repo, 'src');
    mkdirSync(sub);
    const env = { ...process.env, CLAUDE_CONFIG_DIR: claude, FLOW_SESSION_ID: '', FLOW_WIKI_DIR: '', FLOW_ROOT_DIR: '', FLOW_PROJECT_DIR: '' };
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: repo, encoding: 'utf8' }).trim();
    const inSub = await run(process.execPath, [...maestroArgs(), 'observe', '--once'], { cwd: sub, env });
    expect(inSub.stderr).toBe(`maestro: ${join(top, 'src')} is a subfolder of the repository ${top}: the wiki used here is ${join(sub, 'wiki')} and its entries are tagged proj:src, while maestro search and the board read ${join(top, 'wiki')}. Run it from ${top}, or set FLOW_ROOT_DIR=${top}.\n`);
    // Where it is told which root to use, and at the repository's top, nothing is said.
    expect((await run(process.execPath, [...maestroArgs(), 'observe', '--once'], { cwd: sub, env: { ...env, FLOW_ROOT_DIR: repo } })).stderr).toBe('');
    expect((await run(process.execPath, [...maestroArgs(), 'observe', '--once'], { cwd: repo, env })).stderr).toBe('');
  }, budget(60_000));
});

describe('maestro wiki maintain --resolve', () => {
  it('resolves an open audit a person decided, by file or entry id, with their note; anything else is refused and nothing written', async () => {
    writeEntry(join(repo, 'wiki'), 'contexts/debug/C001-retry.md', { id: '"C001"', request: '"Where the retry policy is defined"' }, '## 摘要\n\nsrc/retry.ts\n');
    const filed = await maestro(['wiki', 'audit', 'C001', '--json']);
    expect(filed.code).toBe(0);
    const { path } = JSON.parse(filed.stdout) as { path: string };
    const file = path.split('/').pop()!;
    // Nothing changed the entry: maintain leaves the audit open, and says how one is closed.
    const kept = await maestro(['wiki', 'maintain']);
    expect(kept.stdout).toContain('0 audits resolved, 1 open\nan open audit is resolved by the next wiki maintain once its entry is updated (its updated: after the audit) or removed, or by hand: maestro wiki maintain --resolve <file or entry id> [--note <text>]\n');
    const before = readFileSync(path, 'utf8');
    for (const [args, said] of [
      [['--resolve', 'C002'], `--resolve "C002" names no open audit (an audit file or an entry id); open now: ${file} (C001). Nothing was written.`],
      [['--resolve', '../../knowledge/contexts/debug/C001-retry.md'], 'names no open audit'],
      [['--resolve', 'C001', '--dry-run'], '--resolve changes the wiki: it does not go with --dry-run; nothing was written.'],
      [['--note', 'fine'], '--note goes with --resolve <audit>; nothing was written.'],
    ] as const) {
      const r = await maestro(['wiki', 'maintain', ...args]);
      expect([r.code, r.stdout], args.join(' ')).toEqual([2, '']);
      expect(r.stderr).toContain(said);
      expect(readFileSync(path, 'utf8')).toBe(before);
    }
    const done = await maestro(['wiki', 'maintain', '--resolve', 'C001', '--note', 'checked: the card was right']);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`1 audits resolved, 0 open\n  resolved C001 (${file})\n`);
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(join(repo, 'wiki', 'knowledge', 'audit', 'resolved', file), 'utf8')).toMatch(/status: resolved[\s\S]*# Resolution\n\n\d{4}-\d{2}-\d{2} · checked: the card was right\n$/);
    const listed = JSON.parse((await maestro(['wiki', 'maintain', '--list-audits', '--json'])).stdout);
    expect([listed.open.length, listed.resolved.length]).toEqual([0, 1]);
  }, budget(120_000));
});

describe('maestro wiki lint on pages whose frontmatter does not read as written', () => {
  it('names each with its file and line and what is read instead, and changes nothing', async () => {
    const contexts = join(repo, 'wiki', 'knowledge', 'contexts', 'debug');
    mkdirSync(contexts, { recursive: true });
    const broken = join(contexts, 'C002-broken.md');
    writeFileSync(broken, '---\nid: "C002"\nslug: "broken"\nrequest: [unterminated\ntags: {{{\ntype: "context"\n---\n\n# Broken\n');
    const listed = join(contexts, 'C003-listed.md');
    writeFileSync(listed, '---\nid: "C003"\nslug: "listed"\nrequest: ["pool", "size"]\n---\n\n# Listed\n');
    const before = [broken, listed].map((f) => readFileSync(f));

    const lint = await maestro(['wiki', 'lint']);
    expect(lint.code).toBe(1);
    // Sorted: the pages are listed in the folder's order. C003 is left out (no request), so only C002 is missing from the index.
    expect(lint.stdout.trimEnd().split('\n').sort()).toEqual([
      '4 errors, 0 warnings',
      `error bad_frontmatter: ${broken}:4: request: the value "[unterminated" opens a list with "[" but never closes it; it is read as that text (quote it if text is meant)`,
      `error bad_frontmatter: ${broken}:5: tags: the value "{{{" opens a map with "{" but is not JSON; it is read as that text (quote it if text is meant)`,
      `error not_in_index: C002 is missing from ${join(repo, 'wiki', 'knowledge', 'index.md')}`,
      `error unreadable_entry: ${listed}:4: request: expected text, got a list; without a request the entry is not read: search and the observer's lookups skip it`,
    ]);
    expect([broken, listed].map((f) => readFileSync(f))).toEqual(before);
    expect(existsSync(join(repo, 'wiki', 'knowledge', 'index.md'))).toBe(false);
  });
});

describe('maestro observe --once on a corrupted bundle', () => {
  it('shows what a transcript holds without letting the terminal run it: an escape sequence in a question is printed as \\u{1b}', async () => {
    mkdirSync(projectDir(), { recursive: true });
    // A question that holds what a tool printed: a screen clear, a window title, a line overwritten by a carriage return.
    new TranscriptBuilder().user('why does \u001b[2J\u001b]0;owned\u0007the build fail\rall good').turn({ tools: [{ name: 'Bash', input: { command: 'npm run build' } }], answer: 'a type error' }).writeTo(join(projectDir(), 'esc.jsonl'));
    const text = await maestro(['observe', '--once']);
    expect(text.code).toBe(0);
    // The observer reads the question's text (a CSI sequence and the carriage return go); the window-title sequence
    // it keeps is shown, not run.
    expect(text.stdout).toContain('exp_1 [complete] why does \\u{1b}]0;owned\\u{7}the build fail all good\n');
    expect(text.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    // JSON escapes control characters itself: the question is as the observer read it.
    const json = await maestro(['observe', '--once', '--json']);
    expect(JSON.parse(json.stdout).session.explorations[0].question).toBe('why does \u001b]0;owned\u0007the build fail all good');
  });

  it('says the bundle was set aside, under which name, and that a new one was started', async () => {
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder().user('where is the retry policy defined').turn({ answer: 'src/retry.ts' }).writeTo(join(projectDir(), 'abc.jsonl'));
    const sessionDir = join(repo, 'wiki/sessions/abc');
    mkdirSync(sessionDir, { recursive: true });
    writeFileSync(join(sessionDir, 'bundle.json'), '{ "schemaVersion": 1,');

    const once = await maestro(['observe', '--once']);
    expect(once.code).toBe(0);
    const said = /bundle\.json: not valid JSON \(it ends early, at line 1, column 22\) — set aside as (bundle\.json\.corrupt-\d+); a new bundle was started from the transcript\n/.exec(once.stdout);
    expect(said, once.stdout).not.toBeNull();
    expect(readFileSync(join(sessionDir, said![1]!), 'utf8')).toBe('{ "schemaVersion": 1,');
    expect(JSON.parse(readFileSync(join(sessionDir, 'bundle.json'), 'utf8')).explorations.exp_1.question).toBe('where is the retry policy defined');
  }, budget(60_000));
});

describe('maestro observe --once with the agent turned on', () => {
  it('runs the due summaries and curation through the configured provider, and refuses a bad configuration', async () => {
    mkdirSync(projectDir(), { recursive: true });
    new TranscriptBuilder()
      .user('Fix the retry policy giving up after one attempt')
      .turn({ tools: [{ name: 'Edit', input: { file_path: 'src/retry.ts' } }, { name: 'Bash', input: { command: 'npm test' }, result: 'ok' }], answer: 'maxAttempts is 5 now.' })
      .user('Add a health check endpoint')
      .turn({ tools: [{ name: 'Write', input: { file_path: 'src/health.ts' } }], answer: 'GET /health added.' })
      .writeTo(join(projectDir(), 'retry-session.jsonl'));
    const summary = (intent: string, title: string) => ({
      answer: JSON.stringify({ summary: `${title}: done.`, persist_meta: { should_persist: true, solution_detail: `${title} solution` }, flowchart: { node_title: title, intent_key: intent, title_delta: 'pivot' } }),
    });
    const script = join(dir.path, 'observer-agent.json');
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { match: { role: 'summarize', title: ':exp_1' }, actions: [summary('debug', 'Retry policy')] },
          { match: { role: 'summarize', title: ':exp_2' }, actions: [summary('implement', 'Health check')] },
          {
            match: { role: 'curate' },
            actions: [{ answer: JSON.stringify({ action: 'create', reason: 'agent filed it', entry: { slug: 'retry-policy-attempts', request: 'Why the retry policy gave up after one attempt', summary: 'maxAttempts was 1.', solution: 'Set maxAttempts to 5 in src/retry.ts.' } }) }],
          },
        ],
      }),
    );
    const log = join(dir.path, 'calls.ndjson');
    const once = await maestro(['observe', '--once', '--json', '--agent', 'scripted', '--agent-script', script], { MAESTRO_OBSERVER_AGENT_LOG: log });
    expect(once.code, once.stdout).toBe(0);
    const out = JSON.parse(once.stdout);
    expect(out.session.explorations.map((e: { summary: { source: string; text: string } }) => [e.summary.source, e.summary.text])).toEqual([
      ['ai', 'Retry policy: done.'],
      ['ai', 'Health check: done.'],
    ]);
        // Each intent is curated once: the pivot turn opened the implement bucket, whose (scripted, identical) create dedups.
    expect(out.step.curated).toEqual([
      { intentKey: 'debug', explorationId: 'exp_1', status: 'saved', reason: 'agent filed it', targetId: 'C001' },
      { intentKey: 'implement', explorationId: 'exp_2', status: 'skipped', reason: 'similar_request_exists', targetId: 'C001' },
    ]);
    expect(readFileSync(join(repo, 'wiki/knowledge/contexts/debug/C001-retry-policy-attempts.md'), 'utf8')).toContain('Set maxAttempts to 5 in src/retry.ts.');
    expect(readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l).role)).toEqual(['summarize', 'summarize', 'curate', 'curate']);

    // The same through the environment; a second pass hydrates and asks the agent nothing.
    const again = await maestro(['observe', '--once'], { MAESTRO_OBSERVER_AGENT: `scripted:${script}`, MAESTRO_OBSERVER_AGENT_LOG: log });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('SUMMARY (ai) Retry policy: done.');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(4);

    // Its agent gets the agent sandbox the daemon's settings give: where bwrap cannot start, it says so on stderr and runs on.
    const noBwrap = join(dir.path, 'path-without-bwrap');
    mkdirSync(noBwrap);
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(noBwrap, 'git'));
    const unsandboxed = await maestro(['observe', '--once', '--agent', 'scripted', '--agent-script', script], { PATH: noBwrap });
    expect(unsandboxed.code, unsandboxed.stderr).toBe(0);
    expect(unsandboxed.stderr).toMatch(/^observer: agents run as you, unsandboxed, so an agent can read what you can \(the daemon's token too\): bwrap is not installed/m);
    const refused = await maestro(['observe', '--once', '--agent', 'scripted', '--agent-script', script], { PATH: noBwrap, MAESTRO_AGENT_SANDBOX: 'bwrap' });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('agentSandbox is "bwrap", but bwrap is not installed');

    const bad = await maestro(['observe', '--once'], { MAESTRO_OBSERVER_AGENT: 'gpt-9' });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('MAESTRO_OBSERVER_AGENT must be off, claude, scripted:<script file> or a provider JSON object, got "gpt-9"');
  }, budget(120_000));
});
