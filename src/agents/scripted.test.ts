import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createProvider } from './index.js';
import { loadScript, parseScript } from './scriptFile.js';
import { ScriptedProvider, readCallLog } from './scripted.js';
import { modelChain, resolveTiers } from './tiers.js';
import type { AgentRequest } from './types.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-scripted-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: 'execute', taskTitle: 'Add greeting', prompt: 'p', cwd: dir, model: 'm', allowedTools: ['Read', 'Edit', 'Write'], permissionMode: 'acceptEdits',
    onToken: () => {}, signal: new AbortController().signal, askUser: async () => 'hola', ...overrides,
  };
}

describe('script files', () => {
  it('are parsed once while their text stays, and again as soon as it changes, an error included', () => {
    const file = join(dir, 'script.yaml');
    writeFileSync(file, 'steps:\n  - match: { role: execute }\n    actions: [{ text: one }]\n');
    const first = loadScript(file);
    expect(loadScript(file)).toBe(first);
    writeFileSync(file, 'steps:\n  - match: { role: execute }\n    actions: [{ text: two }]\n');
    expect(loadScript(file).steps[0]!.actions).toEqual([{ text: 'two' }]);
    writeFileSync(file, 'steps: []\n');
    expect(() => loadScript(file)).toThrow(/invalid agent script/);
  });

  it('names the file, line and field of a bad step', () => {
    const yaml = ['steps:', '  - match: { role: execute }', '    actions:', '      - write: { path: ../escape.txt, content: x }'].join('\n');
    expect(() => parseScript(yaml, 'demo.yaml')).toThrow(/demo\.yaml:4: steps\.0\.actions\.0/);
    expect(() => parseScript('steps:\n  - match: { role: deploy }\n', 'd.yaml')).toThrow(/d\.yaml:2: steps\.0\.match\.role/);
    expect(() => parseScript('steps: [\n', 'broken.yaml')).toThrow(expect.objectContaining({ code: 'SCRIPT_INVALID', message: 'broken.yaml is not valid YAML (line 2, column 1).', details: { file: 'broken.yaml', line: 2 } }));
  });

  it('a script that is not YAML is refused naming the file, line and column, and quoting nothing of it', () => {
    const file = join(dir, 'secret.yaml');
    // The yaml package's message would quote the rest of the line: `Not a YAML token: TOPSECRET-1234`.
    writeFileSync(file, '> TOPSECRET-1234\n');
    let refused: Error | undefined;
    try {
      new ScriptedProvider({ script: file });
    } catch (err) {
      refused = err as Error;
    }
    expect(refused?.message).toBe(`${file} is not valid YAML (line 1, column 3).`);
    expect(JSON.stringify({ ...refused, message: refused?.message, cause: String(refused?.cause) })).not.toContain('TOPSECRET');
    // An alias with no anchor is named without the alias: `Unresolved alias (…): TOPSECRET`.
    expect(() => parseScript('steps: [*TOPSECRET]\n', 'alias.yaml')).toThrow(expect.objectContaining({ message: 'alias.yaml cannot be parsed: Unresolved alias (the anchor must be set before the alias)' }));
  });

  it('refuses a YAML alias bomb, naming the file', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]', 'steps: [*c]', ''].join('\n');
    expect(() => parseScript(bomb, 'bomb.yaml')).toThrow(
      expect.objectContaining({ code: 'SCRIPT_INVALID', message: 'bomb.yaml cannot be parsed: Excessive alias count indicates a resource exhaustion attack' }),
    );
  });

  it('refuses, when the script is loaded, a match regex that does not compile, naming file, step and pattern', () => {
    const script = ['steps:', '  - match: { role: plan }', '  - match: { title: "/([/" }', ''].join('\n');
    const file = join(dir, 'bad-regex.yaml');
    writeFileSync(file, script);
    // The reason in parentheses is V8's own wording, which varies between Node versions.
    const refusal = expect.objectContaining({
      code: 'SCRIPT_INVALID',
      message: expect.stringContaining(`invalid agent script: ${file}:3: steps.1.match.title: "/([/" is not a valid regular expression (Invalid regular expression: `),
    });
    expect(() => new ScriptedProvider({ script: file })).toThrow(refusal);
    expect(() => parseScript('steps:\n  - match: { prompt: "/a/zz" }\n', 'flags.yaml')).toThrow(/^invalid agent script: flags\.yaml:2: steps\.0\.match\.prompt: "\/a\/zz" is not a valid regular expression/);
  });

  it('refuses, when the script is loaded, a wait over 10 minutes, naming the file, the step and the limit', () => {
    const file = join(dir, 'slow.yaml');
    writeFileSync(file, ['steps:', '  - match: { role: plan }', '    actions:', '      - text: thinking', '      - wait: 3600000', ''].join('\n'));
    expect(() => new ScriptedProvider({ script: file })).toThrow(
      expect.objectContaining({
        code: 'SCRIPT_INVALID',
        message: `invalid agent script: ${file}:5: steps.0.actions.1.wait: must be at most 600000 ms (10 minutes); for an agent that never answers, use hang: true`,
      }),
    );
    // The limit itself is a wait the script may ask for.
    expect(parseScript('steps:\n  - actions: [{ wait: 600000 }]\n', 'most.yaml').steps[0]!.actions).toEqual([{ wait: 600_000 }]);
  });

  it('the example in docs/scripted-agent.md is a valid script', () => {
    const doc = readFileSync(new URL('../../docs/scripted-agent.md', import.meta.url), 'utf8');
    const example = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
    const script = parseScript(example, 'docs/scripted-agent.md');
    expect(script.steps.map((s) => s.match.role)).toEqual(['plan', 'execute', 'execute', 'review:code', 'review', 'conflict', 'reflect']);
  });

  it('accepts JSON as well as YAML', () => {
    const script = parseScript(JSON.stringify({ steps: [{ match: { role: 'plan' }, actions: [{ text: 'x' }] }] }), 's.json');
    expect(script.steps[0]!.match.role).toBe('plan');
  });
});

describe('scripted provider', () => {
  it('matches by role and title, writes and edits files, and goes on with a clarify reply', async () => {
    const file = join(dir, 's.yaml');
    writeFileSync(file, [
      'steps:',
      '  - match: { role: execute, title: "/^Remove/" }',
      '    actions: [{ text: wrong step }]',
      '  - match: { role: execute, title: greeting }',
      '    actions:',
      '      - write: { path: src/g.txt, content: "hello NAME" }',
      '      - ask: Which name?',
      '      - edit: { path: src/g.txt, find: NAME, replace: "{{reply}}" }',
      '      - text: "done for {{title}}"',
    ].join('\n'));
    const provider = new ScriptedProvider({ script: file });
    const questions: string[] = [];
    const result = await provider.run(request({ askUser: async (q) => (questions.push(q), 'hola') }));
    expect(questions).toEqual(['Which name?']);
    expect(readFileSync(join(dir, 'src/g.txt'), 'utf8')).toBe('hello hola');
    expect(result.text).toBe('done for Add greeting');
  });

  it('fails the first N calls of a step, counting them in the call log across instances', async () => {
    const file = join(dir, 's.yaml');
    const callLog = join(dir, 'calls.ndjson');
    writeFileSync(file, 'steps:\n  - failTimes: 2\n    failMessage: flaky model\n    actions: [{ text: ok }]\n');
    await expect(new ScriptedProvider({ script: file, callLog }).run(request())).rejects.toThrow(/flaky model \(scripted failure 1 of 2\)/);
    await expect(new ScriptedProvider({ script: file, callLog }).run(request())).rejects.toThrow(/scripted failure 2 of 2/);
    expect((await new ScriptedProvider({ script: file, callLog }).run(request())).text).toBe('ok');
    expect(readCallLog(callLog)).toHaveLength(3);
  });

  it('without a call log counts per run (one provider each, createProvider), as docs/scripted-agent.md says', async () => {
    const file = join(dir, 's.yaml');
    writeFileSync(file, 'steps:\n  - match: { role: review:code }\n    times: 1\n    actions: [{ text: reject }]\n  - actions: [{ text: approve }]\n');
    const review = request({ role: 'review:code', allowedTools: ['Read'], permissionMode: 'plan' });
    const run = () => createProvider({ kind: 'scripted', script: file });
    const first = run();
    expect((await first.run(review)).text).toBe('reject');
    expect((await first.run(review)).text).toBe('approve');
    // The next review run starts from zero: it rejects again.
    expect((await run().run(review)).text).toBe('reject');
  });

  it('refuses a call log outside its script\'s folder, not named .ndjson, or through a link out: nothing is written', () => {
    const file = join(dir, 's.yaml');
    writeFileSync(file, 'steps:\n  - actions: [{ text: ok }]\n');
    const elsewhere = mkdtempSync(join(tmpdir(), 'maestro-elsewhere-'));
    try {
      symlinkSync(elsewhere, join(dir, 'out'));
      for (const callLog of [join(elsewhere, 'injected', 'calls.ndjson'), join(dir, '.bashrc'), join(dir, 'out', 'calls.ndjson')]) {
        expect(() => new ScriptedProvider({ script: file, callLog }), callLog).toThrow(
          expect.objectContaining({ code: 'CONFIG_INVALID', message: `scripted agent: its call log ${callLog} must be an .ndjson file in the folder of its script (${dir}), links followed; nothing was written` }),
        );
      }
      expect(readdirSync(elsewhere)).toEqual([]);
      expect(existsSync(join(dir, '.bashrc'))).toBe(false);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses a call no step matches, naming role and task', async () => {
    const file = join(dir, 's.yaml');
    writeFileSync(file, 'steps:\n  - match: { role: plan }\n    times: 1\n    actions: [{ text: ok }]\n');
    const provider = new ScriptedProvider({ script: file });
    await expect(provider.run(request())).rejects.toThrow(/no step .* matches role "execute" and task "Add greeting"/);
    await provider.run(request({ role: 'plan' }));
    await expect(provider.run(request({ role: 'plan' }))).rejects.toMatchObject({ code: 'SCRIPT_INVALID' });
  });

  it('honours read-only tools: a review or plan call cannot change files', async () => {
    const file = join(dir, 's.yaml');
    writeFileSync(file, 'steps:\n  - actions: [{ write: { path: x.txt, content: x } }]\n');
    const provider = new ScriptedProvider({ script: file });
    await expect(provider.run(request({ role: 'review:code', allowedTools: ['Read', 'Grep', 'Glob'], permissionMode: 'plan' }))).rejects.toThrow(/changing x\.txt refused: this review:code call has read-only tools/);
    expect(existsSync(join(dir, 'x.txt'))).toBe(false);
  });

  it('does not write through a link in the working directory to a folder outside it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'maestro-outside-'));
    try {
      symlinkSync(outside, join(dir, 'link'));
      symlinkSync(join(outside, 'nowhere'), join(dir, 'dangling'));
      const file = join(dir, 's.yaml');
      for (const path of ['link/pwned.txt', 'link/deeper/pwned.txt', 'dangling']) {
        writeFileSync(file, `steps:\n  - actions: [{ write: { path: ${path}, content: x } }]\n`);
        await expect(new ScriptedProvider({ script: file }).run(request())).rejects.toThrow(`scripted agent: ${path} leads out of the working directory through a link`);
      }
      expect(readdirSync(outside)).toEqual([]);
      // A link that stays inside is a path like any other.
      mkdirSync(join(dir, 'sub'));
      symlinkSync(join(dir, 'sub'), join(dir, 'inner'));
      writeFileSync(file, 'steps:\n  - actions: [{ write: { path: inner/ok.txt, content: x } }]\n');
      await new ScriptedProvider({ script: file }).run(request());
      expect(readFileSync(join(dir, 'sub', 'ok.txt'), 'utf8')).toBe('x');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('refuses an unknown provider kind by name', () => {
    expect(() => createProvider({ kind: 'gpt' })).toThrow(/unknown agent provider "gpt"/);
  });
});

describe('model tiers', () => {
  it('are overridable by environment variable and fall back strongest to weaker', () => {
    const tiers = resolveTiers({ MAESTRO_MODEL_HARD: 'big-1', MAESTRO_MODEL_EASY: ' ' });
    expect(tiers).toEqual({ hard: 'big-1', medium: 'sonnet', easy: 'haiku' });
    expect(modelChain('hard', tiers)).toEqual(['big-1', 'sonnet']);
    expect(modelChain('medium', tiers)).toEqual(['sonnet', 'haiku']);
    expect(modelChain('easy', tiers)).toEqual(['haiku', 'haiku']);
  });
});
