#!/usr/bin/env node
/**
 * A complete agent for Maestro's `command` provider, following docs/agents.md.
 * No network, no model: it is deterministic, so it shows the contract rather
 * than intelligence. It reads the prompt on stdin, its role from MAESTRO_ROLE,
 * works in its current directory (the task's worktree) and answers on stdout.
 *
 *   plan             one subtask per instruction found, as the table + ```json block
 *   execute          carries out instructions written in the task (see below)
 *   review:code      rejects a change that adds a line containing TODO (with file and line)
 *   review:security  rejects a change that adds something that looks like a secret
 *   conflict         resolves conflict markers by keeping both sides
 *   reflect          a short analysis (changes nothing)
 *
 * Instructions it understands, anywhere in the prompt (title, description,
 * feedback, a reviewer's line comment or the answer to its question):
 *   create file `path` containing `text`
 *   append `text` to `path`
 * With no instruction it asks:  CLARIFY: <question>  and Maestro runs it again
 * with the question and the person's answer appended to the prompt.
 *
 * Use it:  maestro project add <repo> --provider command --command 'node /abs/path/file-agent.mjs'
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';

const role = process.env.MAESTRO_ROLE ?? 'execute';
const model = process.env.MAESTRO_MODEL ?? 'none';
const prompt = readFileSync(0, 'utf8');
const cwd = process.cwd();

/** Paths stay inside the worktree: an instruction cannot write elsewhere. */
function inside(path) {
  const full = resolve(cwd, path);
  if (full !== cwd && !full.startsWith(cwd + sep)) fail(`refusing ${path}: outside the working directory`);
  return full;
}

function fail(message) {
  process.stderr.write(`file-agent: ${message}\n`);
  process.exit(1); // non-zero: the call failed (Maestro retries once on the next model, then needs a person)
}

function instructions(text) {
  const found = [];
  for (const m of text.matchAll(/create file `([^`]+)` containing `([^`]*)`/gi)) found.push({ op: 'create', path: m[1], text: m[2] });
  for (const m of text.matchAll(/append `([^`]*)` to `([^`]+)`/gi)) found.push({ op: 'append', path: m[2], text: m[1] });
  return found;
}

function title() {
  return /^# Task: (.*)$/m.exec(prompt)?.[1] ?? 'the task';
}

function plan() {
  const steps = instructions(prompt);
  const subtasks = (steps.length ? steps : [{ op: 'do', path: '', text: title() }]).map((s, i) => ({
    title: s.op === 'do' ? s.text : `${s.op} ${s.path}`,
    complexity: 'easy',
    priority: 'P1',
    deps: i > 0 ? [i - 1] : [],
    ownedFiles: s.path ? [s.path] : [],
    expectedOutput: s.op === 'do' ? 'the change the task asks for' : `${s.path} holds "${s.text}"`,
  }));
  const rows = subtasks.map((s, i) => `| ${i} | ${s.title} | ${s.complexity} | ${s.priority} | ${s.deps.join(', ')} | ${s.ownedFiles.join(', ')} |`);
  const body = { plan: `Carry out ${subtasks.length} instruction(s) in order.`, subtasks };
  console.log([body.plan, '', '| # | title | complexity | priority | deps | ownedFiles |', '| --- | --- | --- | --- | --- | --- |', ...rows, '', '```json', JSON.stringify(body, null, 2), '```'].join('\n'));
}

function execute() {
  const steps = instructions(prompt);
  if (!steps.length) {
    console.log('I found no instruction I can carry out.');
    console.log("CLARIFY: Which file should I create? Answer like: create file `notes.md` containing `hello`");
    return;
  }
  for (const s of steps) {
    const full = inside(s.path);
    mkdirSync(dirname(full), { recursive: true });
    if (s.op === 'create') writeFileSync(full, `${s.text}\n`);
    else appendFileSync(full, `${s.text}\n`);
    console.log(`${s.op === 'create' ? 'Created' : 'Appended to'} ${s.path} (model ${model}).`);
  }
}

/** Added lines of the ```diff block in the prompt, with their file and new line number. */
function addedLines() {
  const diff = /```diff\n([\s\S]*?)\n```/.exec(prompt)?.[1] ?? '';
  const out = [];
  let file = null;
  let line = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++ ')) file = l.slice(4).replace(/^b\//, '');
    else if (l.startsWith('@@')) line = Number(/\+(\d+)/.exec(l)?.[1] ?? 1);
    else if (l.startsWith('+')) out.push({ file, line: line++, text: l.slice(1) });
    else if (!l.startsWith('-') && !l.startsWith('\\')) line++;
  }
  return out;
}

function review(focus) {
  const bad = focus === 'code'
    ? addedLines().filter((l) => /\bTODO\b/.test(l.text)).map((l) => ({ severity: 'medium', file: l.file, line: l.line, message: 'a TODO left in the change' }))
    : addedLines().filter((l) => /(api[_-]?key|secret|password)\s*[:=]/i.test(l.text)).map((l) => ({ severity: 'high', file: l.file, line: l.line, message: 'this looks like a secret' }));
  const verdict = { verdict: bad.length ? 'reject' : 'approve', summary: bad.length ? `${bad.length} line(s) must change.` : `The ${focus} review found nothing to fix.`, findings: bad };
  console.log(`${verdict.summary}\n\n\`\`\`json\n${JSON.stringify(verdict, null, 2)}\n\`\`\``);
}

function conflict() {
  const files = /conflicts in: (.*)\.$/m.exec(prompt)?.[1]?.split(', ') ?? [];
  for (const f of files) {
    const full = inside(f);
    if (!existsSync(full)) continue;
    // Keep both sides: drop the marker lines, keep every line between them.
    const text = readFileSync(full, 'utf8').split('\n').filter((l) => !/^(<{7}|={7}|>{7})( |$)/.test(l)).join('\n');
    writeFileSync(full, text);
    console.log(`Resolved ${f} by keeping both sides.`);
  }
}

switch (role) {
  case 'plan': plan(); break;
  case 'execute': execute(); break;
  case 'review:code': review('code'); break;
  case 'review:security': review('security'); break;
  case 'conflict': conflict(); break;
  case 'reflect': console.log('The last tries failed on the same instruction; the next try must follow the instructions in the task literally.'); break;
  default: fail(`unknown role ${role}`);
}
