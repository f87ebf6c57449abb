/**
 * A lean worker: everything a worker of the scripted or command provider
 * imports (src/executor/run.ts and its graph) loads without the Claude Agent
 * SDK, which is imported only when a claude run starts. A module resolve hook
 * in a child process records every specifier that names the SDK.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const url = (path: string) => pathToFileURL(`${ROOT}/${path}`).href;

/** Imports `modules` in a fresh process and answers which SDK specifiers were resolved on the way. */
function sdkResolutions(modules: string[]): string[] {
  const script = `
    import { register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const seen = [];
    let done;
    const finished = new Promise((r) => (done = r));
    port1.on('message', (m) => (m === 'sentinel:end' ? done() : m.includes('claude-agent-sdk') && seen.push(m)));
    const hook = 'let port; export function initialize(d) { port = d.port; }' +
      ' export async function resolve(spec, ctx, next) { port.postMessage(spec.startsWith("data:") ? "sentinel:end" : spec); return next(spec, ctx); }';
    register('data:text/javascript,' + encodeURIComponent(hook), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
    for (const m of ${JSON.stringify(modules)}) await import(m);
    await import('data:text/javascript,export default 1');
    await finished;
    port1.close();
    console.log(JSON.stringify(seen));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: budget(120_000) });
  if (r.status !== 0) throw new Error(`the child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as string[];
}

describe('the Claude Agent SDK is loaded only by claude runs', () => {
  it("a scripted or command worker's modules never resolve it; importing it directly does (the hook sees it)", () => {
    expect(sdkResolutions([url('src/executor/run.ts'), url('src/executor/protocol/index.ts'), url('src/agents/index.ts')])).toEqual([]);
    expect(sdkResolutions(['@anthropic-ai/claude-agent-sdk'])).toEqual(['@anthropic-ai/claude-agent-sdk']);
  });
});
