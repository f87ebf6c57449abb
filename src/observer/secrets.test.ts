/**
 * Secrets in a Claude Code transcript (a pasted key, `cat .env`, a Bearer header
 * in a curl command, a private key read from disk, a database URL with its
 * password) never reach what the observer writes or shows: the wiki (entries,
 * bundles, log, index), the session view the board and the terminal show, nor
 * what the summary and curator agents are sent. Each is replaced by a visible
 * `[redacted: <kind>]`. An agent's own answer is redacted too (it may have read
 * the `.env` itself).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, type TempDir } from './__fixtures__/transcript-builder.js';
import type { CuratorInput } from './curation/curator.js';
import type { ExplorationDigest } from './summary/digest.js';
import { loadBundle } from './bundle/store.js';
import { ObserverSession, type ObserverSessionOptions } from './session.js';
import { bundlePath, wikiLayout } from '../knowledge/format/wiki/layout.js';

const SECRETS = {
  anthropic: 'sk-ant-api03-Zx9AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
  awsId: 'AKIAIOSFODNN7EXAMPLE',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  github: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
  dbPassword: 'hunter2-Prod!',
  pem: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
  slack: 'xoxb-123456789012-abcdefghijklmnop',
  stripeLong: 'sk_live_51HqLongTokenInABigToolResult00',
};
const ALL = Object.values(SECRETS);

let dir: TempDir;
let wiki: string;
let jsonl: string;
let now: number;
beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
  jsonl = join(dir.path, 'claude', 's1.jsonl');
  now = Date.parse('2026-11-20T10:00:00.000Z');
});
afterEach(() => dir.cleanup());

function walk(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
}

/** Every secret found in any file under the wiki, as `<file>: <secret>`. */
function leaksIn(texts: Record<string, string>): string[] {
  return Object.entries(texts).flatMap(([where, text]) => ALL.filter((s) => text.includes(s)).map((s) => `${where}: ${s}`));
}

function wikiFiles(): Record<string, string> {
  return Object.fromEntries(walk(wiki).map((f) => [f.slice(wiki.length), readFileSync(f, 'utf8')]));
}

function writeLeakyTranscript(): void {
  const envDump = `AWS_ACCESS_KEY_ID=${SECRETS.awsId}\nAWS_SECRET_ACCESS_KEY=${SECRETS.awsSecret}\nSLACK_BOT=${SECRETS.slack}\nPORT=3000`;
  // Past the cutter's fast path (2 KiB): its preview is read from the raw bytes.
  const bigResult = `STRIPE_KEY=${SECRETS.stripeLong}\n${'log line\n'.repeat(400)}`;
  const b = new TranscriptBuilder(now);
  b.user(`Fix the deploy script; my key is ${SECRETS.anthropic} and DATABASE_URL=postgres://admin:${SECRETS.dbPassword}@db.example/prod`).turn({
    tools: [
      { name: 'Bash', input: { command: 'cat .env' }, result: envDump },
      { name: 'Bash', input: { command: `curl -H "Authorization: Bearer ${SECRETS.github}" https://api.github.com/user` }, result: '{"login":"ann"}' },
      { name: 'Read', input: { file_path: 'deploy/key.pem' }, result: `-----BEGIN PRIVATE KEY-----\n${SECRETS.pem}\n-----END PRIVATE KEY-----` },
      { name: 'Bash', input: { command: 'tail -n 400 deploy.log' }, result: bigResult },
      { name: 'Edit', input: { file_path: 'deploy.sh', old_string: 'a', new_string: 'b' } },
    ],
    answer: `Fixed. The deploy reads AWS_SECRET_ACCESS_KEY=${SECRETS.awsSecret} from .env; the token ${SECRETS.github} works.`,
  });
  b.writeTo(jsonl);
  now = b.clock + 60_000;
}

function open(extra: Partial<ObserverSessionOptions>): ObserverSession {
  return new ObserverSession({ sessionId: 's1', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now, ...extra });
}

describe('secrets in a transcript', () => {
  it('without a model: the bundle, the created entry, the log, the index and the view hold markers, never the values', async () => {
    writeLeakyTranscript();
    const s = open({ legacyPerTurn: true });
    const step = await s.step();
    expect(step.curated).toMatchObject([{ status: 'saved' }]);
    const files = wikiFiles();
    expect(leaksIn({ ...files, view: JSON.stringify(s.view()) })).toEqual([]);
    const bundle = files['/sessions/s1/bundle.json']!;
    for (const kind of ['anthropic-key', 'url-password', 'aws-access-key', 'bearer-token', 'private-key', 'secret']) expect(bundle).toContain(`[redacted: ${kind}]`);
    const entry = Object.entries(files).find(([f]) => f.includes('/contexts/'))!;
    expect(entry[0]).toContain('redacted-anthropic-key');
    expect(entry[1]).toContain('Authorization: Bearer [redacted: bearer-token]');
  });

  it('with agents: what they are sent is redacted, and so is what they answer', async () => {
    writeLeakyTranscript();
    const sent: Array<ExplorationDigest | CuratorInput> = [];
    const s = open({
      legacyPerTurn: true,
      summarize: async (digest) => {
        sent.push(digest);
        return { explorationId: digest.explorationId, text: `Read .env: AWS_SECRET_ACCESS_KEY=${SECRETS.awsSecret}`, source: 'ai', status: 'ready', persistMeta: { should_persist: true, solution_detail: `use ${SECRETS.github}` }, savedAt: now };
      },
      curate: async (input) => {
        sent.push(input);
        return {
          action: 'create',
          entry: { type: 'context', slug: 'deploy-keys', request: 'Fix the deploy script', summary: `The key is ${SECRETS.anthropic}`, solution: `export GITHUB_TOKEN=${SECRETS.github}`, command: `psql postgres://admin:${SECRETS.dbPassword}@db/prod` , facet: 'command' },
        };
      },
    });
    await s.step();
    expect(sent.length).toBe(2);
    expect(leaksIn({ sent: JSON.stringify(sent), ...wikiFiles(), view: JSON.stringify(s.view()) })).toEqual([]);
    expect(JSON.stringify(sent)).toContain('[redacted: aws-access-key]');
    const entry = Object.entries(wikiFiles()).find(([f]) => f.includes('/contexts/'))![1];
    expect(entry).toContain('export GITHUB_TOKEN=[redacted: github-token]');
    expect(entry).toContain('psql postgres://admin:[redacted: url-password]@db/prod');
  });

  it('a bundle written before redaction is read redacted (the board shows it so) and written back so', async () => {
    new TranscriptBuilder(now).user('Why does the deploy fail?').turn({ tools: [{ name: 'Bash', input: { command: 'npm run deploy' } }], answer: 'The key was wrong.' }).writeTo(jsonl);
    now += 60_000;
    await open({}).step();
    const layout = wikiLayout(wiki);
    const path = bundlePath(layout, 's1');
    const old = JSON.parse(readFileSync(path, 'utf8'));
    old.explorations.exp_1.question = `Why does the deploy fail with ${SECRETS.anthropic}?`;
    old.explorations.exp_1.summary.text = `AWS_SECRET_ACCESS_KEY=${SECRETS.awsSecret}`;
    old.curation.evidence.exp_1.commands = [`curl -H "Authorization: Bearer ${SECRETS.github}" x`];
    writeFileSync(path, JSON.stringify(old, null, 2));
    const loaded = loadBundle(layout, 's1', { workspaceRoot: dir.path }).bundle!;
    expect(leaksIn({ loaded: JSON.stringify(loaded) })).toEqual([]);
    expect(loaded.explorations.exp_1!.summary!.text).toBe('AWS_SECRET_ACCESS_KEY=[redacted: secret]');
    expect(loaded.meta.jsonlPath).toBe(jsonl);
    new TranscriptBuilder(now + 1_000).user('And the staging deploy?').turn({ answer: 'Same fix.' }).appendTo(jsonl);
    now += 60_000;
    await open({}).step();
    expect(leaksIn(wikiFiles())).toEqual([]);
  });

  it('a title cut short never ends inside a marker: the intent, the flow labels and the entry\'s page title are cut before it, with or without a model', async () => {
    // A trial: `maestro observe` showed `intent my key is [redacted: [devops]`, the title cut after its
    // 8th word, inside the marker. Titles made from a question are its first 8 words, at most 48
    // characters; a running question's flow label its first 48; a model's title at most 80.
    const deploy = (text: string) => new TranscriptBuilder(now).user(text).turn({ tools: [{ name: 'Bash', input: { command: 'docker compose up' } }], answer: 'Deployed.' });
    const transcript = (sid: string) => join(dir.path, 'claude', `${sid}.jsonl`);
    deploy(`ok so I said my key is ${SECRETS.anthropic} please deploy`).user(`and the staging one with the same key ${SECRETS.anthropic}`).writeTo(transcript('s1'));
    deploy(`deploy with docker, my key is ${SECRETS.anthropic} ok`).writeTo(transcript('s2'));
    deploy('Deploy it with docker').writeTo(transcript('s3'));
    const modelTitle = `${'Deploy with docker and check the logs, '.repeat(2).slice(0, 70)} ${SECRETS.github}`;
    now += 60_000;

    const s1 = open({ sessionId: 's1', jsonlPath: transcript('s1') });
    await s1.step();
    expect(s1.view().intent).toMatchObject({ intentKey: 'devops', nodeTitle: 'ok so I said my key is' });
    const flow = loadBundle(wikiLayout(wiki), 's1', { workspaceRoot: dir.path }).bundle!.session.flow.flowGraph!;
    expect(flow.nodes.map((n) => n.label)).toEqual(['ok so I said my key is', 'and the staging one with the same key ']);

    await open({ sessionId: 's2', jsonlPath: transcript('s2'), legacyPerTurn: true }).step();
    const entry = Object.entries(wikiFiles()).find(([f]) => f.includes('/contexts/'))![1];
    expect(entry).toContain('\n# deploy with docker, my key is …\n');

    const s3 = open({
      sessionId: 's3',
      jsonlPath: transcript('s3'),
      summarize: async (digest) => ({ explorationId: digest.explorationId, text: 'Deployed.', source: 'ai', status: 'ready', flowchart: { nodeId: digest.explorationId, nodeTitle: modelTitle, parentId: null, branchType: 'trunk', importance: 'high', dropFromChart: false, intentKey: 'devops', titleDeltaNote: `key ${SECRETS.github}` }, savedAt: now }),
    });
    await s3.step();
    expect(s3.view().intent!.nodeTitle).toBe(`${modelTitle.slice(0, 70)} `);
    // Its note is redacted too (it was kept as the model wrote it).
    expect(s3.view().explorations[0]!.summary!.flowchart!.titleDeltaNote).toBe('key [redacted: github-token]');
    expect(leaksIn({ views: JSON.stringify([s1.view(), s3.view()]), ...wikiFiles() })).toEqual([]);
  });

  it("the session's bundle and the index are the owner's only (0600, the session folder 0700), whatever the umask", async () => {
    new TranscriptBuilder(now).user('Why does the deploy fail?').turn({ answer: 'The key was wrong.' }).writeTo(jsonl);
    now += 60_000;
    const umask = process.umask(0o002);
    try {
      await open({}).step();
    } finally {
      process.umask(umask);
    }
    const layout = wikiLayout(wiki);
    const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
    expect([mode(bundlePath(layout, 's1')), mode(join(layout.sessions, 's1')), mode(layout.sessionIndex)]).toEqual(['600', '700', '600']);
  });
});
