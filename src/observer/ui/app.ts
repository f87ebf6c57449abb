/**
 * The terminal UI (Ink) that sits beside Claude Code in a split:
 *   status bar   line 1 session meta; line 2 the current intent (node title)
 *   cards        one per exploration: question · tool meta (+ wiki badge on an
 *                intent's anchor turn) · KNOWLEDGE (prior hit) · SUMMARY
 *   keys         ↑/↓ (or p/n) select · g/G first/last (G follows new ones)
 *                k files an audit against the selected card's KNOWLEDGE
 *                a / d accept or dismiss the selected card's curation proposal
 *                (curation without an agent never edits an entry itself) · q quit
 * Written with createElement rather than JSX so the project needs no JSX build.
 */
import { Box, Text, useApp, useInput } from 'ink';
import { createElement as h, useEffect, useRef, useState, type ReactElement } from 'react';
import type { ExplorationView, SessionView } from '../view.js';
import { clipOutsideMarkers } from '../../core/redact.js';
import { visible } from '../../lib/visible.js';

export interface ObserverUiSource {
  /** The current view; called on every render (it runs prior retrieval for new questions). */
  view(): SessionView;
  /** Calls back whenever the session changed; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Files an audit against a KNOWLEDGE card; returns the audit file name. */
  fileAudit(input: { targetId: string; explorationId: string; request: string }): string;
  /** Open curation proposals (curation/proposals.ts), by id. */
  openProposals(): ReadonlyMap<string, { targetId: string; newFacts: string[] }>;
  /** Accepts (applies) or dismisses a proposal; returns what happened, for the message line. */
  decideProposal(id: string, decision: 'accept' | 'dismiss'): string;
}

/** `1 tool`, `2 tools`: the terminal UI is English-only; the board uses i18next plurals. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

const CARD_WINDOW = 4;

/**
 * A line of text. What it shows comes from the person's transcript (a question may hold what a tool printed) and from
 * the wiki: its control characters are shown as `\u{…}` (visible), never run by the terminal beside Claude Code.
 */
function line(props: Parameters<typeof Text>[0] & { key?: string }, text: string): ReactElement {
  return h(Text, props, visible(text));
}

function clip(text: string, n: number): string {
  return clipOutsideMarkers(text.replace(/\s+/g, ' ').trim(), n);
}

function statusBar(view: SessionView): ReactElement {
  const running = view.explorations.filter((e) => e.status === 'running').length;
  const meta = [
    `session ${view.sessionId.slice(0, 12)}`,
    `${plural(view.explorations.length, 'exploration')}${running ? ` (${running} running)` : ''}`,
    view.tokens.input || view.tokens.output ? `tokens ${view.tokens.input}/${view.tokens.output}` : `tokens ${view.tokens.total}`,
    view.mode === 'restore' ? 'restore' : `bundle ${view.load.status}`,
  ];
  if (view.transcript?.issueCount) meta.push(plural(view.transcript.issueCount, 'bad line'));
  const compactions = view.transcript?.sessionEvents.filter((e) => e.kind === 'compact').length ?? 0;
  if (compactions) meta.push(`compacted ×${compactions}`);
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'single', paddingX: 1 },
    line({ bold: true }, meta.join(' · ')),
    line({ color: 'cyan' }, `Intent: ${view.intent ? `${view.intent.nodeTitle} (${view.intent.intentKey})` : '—'}`),
    view.hold ? line({ color: 'red' }, `NOT WRITTEN: ${view.hold.detail}`) : null,
  );
}

function wikiBadge(e: ExplorationView): string {
  if (!e.wiki) return '';
  if (e.wiki.proposalId) return ` · wiki proposal for ${e.wiki.targetId ?? '?'}`;
  const turns = e.wiki.turnCount && e.wiki.turnCount > 1 ? ` (${e.wiki.turnCount} turns)` : '';
  return ` · wiki ${e.wiki.targetId ? `${e.wiki.targetId} ` : ''}${e.wiki.status}${turns}`;
}

function metaLine(e: ExplorationView): string {
  if (e.status === 'running') return `Running · ${plural(e.toolCount, 'tool')}${e.activeTool ? ` · ${clip(e.activeTool, 60)}` : ''}`;
  const head = e.status === 'interrupted' ? 'Interrupted' : 'Done';
  return `${head} · ${plural(e.toolCount, 'tool')}${e.toolSummary ? ` (${e.toolSummary})` : ''}${e.errorCount ? ` · ${plural(e.errorCount, 'error')}` : ''}${wikiBadge(e)}`;
}

/** Subagent runs, nested under their exploration's meta line. */
function subagentLines(e: ExplorationView, width: number): ReactElement[] {
  return e.subagents.map((run, i) =>
    line({ key: `sub${i}`, dimColor: true }, `  ↳ subagent: ${clip(run.prompt, width - 40)} · ${plural(run.toolCount, 'tool')}${run.toolSummary ? ` (${run.toolSummary})` : ''}${run.errorCount ? ` · ${plural(run.errorCount, 'error')}` : ''}`),
  );
}

function proposalLine(e: ExplorationView, proposals: ReturnType<ObserverUiSource['openProposals']>, width: number): ReactElement | null {
  const id = e.wiki?.proposalId;
  const p = id ? proposals.get(id) : undefined;
  if (!id || !p) return null;
  return line({ color: 'magenta' }, `PROPOSAL for ${p.targetId}: ${clip(p.newFacts.join(' · '), width - 40)} — a accept · d dismiss`);
}

function card(e: ExplorationView, selected: boolean, width: number, proposals: ReturnType<ObserverUiSource['openProposals']>): ReactElement {
  const k = e.knowledge;
  const knowledge =
    k === undefined ? line({ dimColor: true }, 'KNOWLEDGE …') : k === null ? line({ dimColor: true }, 'KNOWLEDGE — nothing in the wiki yet') : h(Box, { flexDirection: 'column' }, line({ color: 'green' }, `KNOWLEDGE ${k.entryId} · ${clip(k.request, width - 24)} (${k.score.toFixed(2)})`), k.excerpt ? line({ dimColor: true }, `  ${clip(k.excerpt, width - 4)}`) : null);
  const summary = e.summary ? line({}, `SUMMARY ${clip(e.summary.text, width * 2)}`) : line({ dimColor: true }, e.status === 'running' ? 'SUMMARY (when the turn ends)' : 'SUMMARY …');
  return h(
    Box,
    { key: e.id, flexDirection: 'column', borderStyle: selected ? 'double' : 'round', borderColor: selected ? 'yellow' : 'gray', paddingX: 1 },
    line({ bold: true }, `${selected ? '▸ ' : ''}${e.id} · ${clip(e.question, width - 12)}`),
    line({ color: e.status === 'running' ? 'yellow' : e.status === 'interrupted' ? 'red' : 'white' }, metaLine(e)),
    ...subagentLines(e, width),
    knowledge,
    summary,
    proposalLine(e, proposals, width),
  );
}

export function ObserverApp(props: { source: ObserverUiSource; width?: number }): ReactElement {
  const { exit } = useApp();
  const [, setTick] = useState(0);
  const [selected, setSelected] = useState<number | null>(null);
  const [message, setMessage] = useState('');
  useEffect(() => props.source.subscribe(() => setTick((t) => t + 1)), [props.source]);
  const view = props.source.view();
  const count = view.explorations.length;
  // null = follow the newest exploration.
  const index = count ? Math.min(selected ?? count - 1, count - 1) : -1;
  const width = props.width ?? Math.max(40, Math.min(process.stdout.columns || 80, 120));
  // Keys can arrive before Ink re-binds the handler after a render: read the latest view from a ref.
  const latest = useRef({ view, index });
  latest.current = { view, index };

  useInput((input, key) => {
    const { view, index } = latest.current;
    const count = view.explorations.length;
    if (input === 'q' || key.escape) {
      exit();
      return;
    }
    if (!count) return;
    // Functional updates: several keys can arrive before the next render.
    const current = (s: number | null) => Math.min(s ?? count - 1, count - 1);
    if (key.upArrow || input === 'p') setSelected((s) => Math.max(0, current(s) - 1));
    else if (key.downArrow || input === 'n') setSelected((s) => (current(s) + 1 >= count - 1 ? null : current(s) + 1));
    else if (input === 'g') setSelected(0);
    else if (input === 'G') setSelected(null);
    else if (input === 'a' || input === 'd') {
      const e = view.explorations[index]!;
      const id = e.wiki?.proposalId;
      if (!id || !props.source.openProposals().has(id)) {
        setMessage(`No open proposal on ${e.id}.`);
        return;
      }
      try {
        setMessage(props.source.decideProposal(id, input === 'a' ? 'accept' : 'dismiss'));
      } catch (err) {
        setMessage(`Proposal ${id} not changed: ${(err as Error).message}`);
      }
    } else if (input === 'k') {
      const e = view.explorations[index]!;
      if (!e.knowledge) {
        setMessage(`No KNOWLEDGE card on ${e.id} to audit.`);
        return;
      }
      try {
        const file = props.source.fileAudit({ targetId: e.knowledge.entryId, explorationId: e.id, request: e.question });
        setMessage(`Audit filed against ${e.knowledge.entryId}: ${file}`);
      } catch (err) {
        setMessage(`Audit not filed: ${(err as Error).message}`);
      }
    }
  });

  const start = Math.max(0, Math.min(index - CARD_WINDOW + 1, count - CARD_WINDOW));
  const shown = view.explorations.slice(Math.max(0, start), Math.max(0, start) + CARD_WINDOW);
  const proposals = props.source.openProposals();
  return h(
    Box,
    { flexDirection: 'column', width },
    statusBar(view),
    count ? null : line({ dimColor: true }, 'Waiting for the first question…'),
    ...shown.map((e) => card(e, view.explorations.indexOf(e) === index, width, proposals)),
    message ? line({ color: 'magenta' }, message) : null,
    line({ dimColor: true }, `${count ? `${index + 1}/${count} · ` : ''}↑/↓ select · g/G first/last · k audit KNOWLEDGE · a/d accept/dismiss proposal · q quit`),
  );
}
