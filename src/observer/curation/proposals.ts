/**
 * Curation proposals: what curation would have changed in an EXISTING wiki
 * entry, waiting for a person. Without an agent, curation never rewrites an
 * entry by itself (GUI-Anything appended the mechanical summary to whatever
 * entry matched); it files a proposal here instead, and the person accepts
 * (the update is applied then) or dismisses it, from the terminal UI (`a`/`d`),
 * the board, or the API. The same happens, agent or not, when the entry has
 * an open audit (a person said it is wrong: nothing touches it until the audit
 * is resolved), and when dedup finds a similar entry but the session brought a
 * fact that entry does not have (kept as a merge proposal, not dropped).
 *
 * One JSON file per proposal: `wiki/knowledge/proposals/<id>.json` while open,
 * `proposals/closed/<id>.json` once accepted or dismissed. GUI-Anything does
 * not read this folder; its entry listing only walks contexts/entities/summaries.
 *
 *   open ──accept──▶ accepted (the entry updated, version + 1)
 *        └─dismiss─▶ dismissed (nothing changed)
 */
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { readRegularFile } from '../../lib/regularFile.js';
import { join } from 'node:path';
import { z } from 'zod';
import { MaestroError } from '../../core/errors.js';
import { jsonSyntaxWhere } from '../../lib/jsonError.js';
import { listWikiEntries, type WikiEntry } from '../../knowledge/format/wiki/entries.js';
import { wikiLayout, writeFileAtomic } from '../../knowledge/format/wiki/layout.js';
import { updateEntry, type EntryDraft } from '../wiki/writer.js';
import { listAudits } from '../upkeep/audit.js';

export type ProposalKind = 'update' | 'merge';
export type ProposalStatus = 'open' | 'accepted' | 'dismissed';

export interface Proposal {
  schemaVersion: 1;
  id: string;
  status: ProposalStatus;
  /** update: curation would have updated the entry; merge: dedup found it similar but the session adds facts. */
  kind: ProposalKind;
  /** Why it is a proposal and not a write: `no_agent`, `open_audit`, `dedup_new_fact`. */
  reason: string;
  targetId: string;
  targetPath: string;
  targetRequest: string;
  filedAt: string;
  source: { sessionId: string; explorationId: string };
  intentKey?: string;
  /** The lines that would be added, as a person reads them. */
  newFacts: string[];
  draft: Pick<EntryDraft, 'solution' | 'tags' | 'confidence'>;
  closedAt?: string;
  note?: string;
}

/**
 * A proposal file as read back: a person (or GUI-Anything) may have edited it, and a field missing or of another
 * type failed later, far from the file (`filedAt` undefined broke the whole listing; a `draft.tags` string was
 * spread into one tag per character). The proposal shown (the API's, wire/observer.ts) has the known fields only;
 * the file's other keys are kept in `raw` and written back when it is closed.
 */
const proposalSchema = z.object({
  schemaVersion: z.literal(1),
  id: z.string().regex(/^P-/, 'a proposal id (P-<time>-<entry id>)'),
  status: z.enum(['open', 'accepted', 'dismissed']),
  kind: z.enum(['update', 'merge']),
  reason: z.string(),
  targetId: z.string().min(1),
  targetPath: z.string(),
  targetRequest: z.string(),
  filedAt: z.string().min(1),
  source: z.object({ sessionId: z.string().min(1), explorationId: z.string().min(1) }),
  intentKey: z.string().optional(),
  newFacts: z.array(z.string()),
  draft: z.object({ solution: z.string(), tags: z.array(z.string()).optional(), confidence: z.number().min(0).max(1).optional() }),
  closedAt: z.string().optional(),
  note: z.string().optional(),
});

interface ReadProposal {
  proposal: Proposal;
  /** The file's JSON as it is, keys we do not know included. */
  raw: Record<string, unknown>;
}

/** The proposal in `raw`, read from `<id>.json`, or what is wrong with it, field by field (said after the file's path). */
function checkProposal(raw: unknown, id: string): ReadProposal | { problem: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { problem: 'not a proposal (a JSON object)' };
  const version = (raw as { schemaVersion?: unknown }).schemaVersion;
  if (version !== 1) return { problem: `not a schemaVersion 1 proposal (schemaVersion ${JSON.stringify(version)})` };
  const parsed = proposalSchema.safeParse(raw);
  if (!parsed.success) return { problem: `not a valid proposal: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
  // Closing writes closed/<id>.json by the id inside: another one would close a proposal the list never showed.
  if (parsed.data.id !== id) return { problem: `not a valid proposal: id: ${JSON.stringify(parsed.data.id)} is not the file's name (${id}.json)` };
  return { proposal: parsed.data, raw: raw as Record<string, unknown> };
}

export function proposalsDir(wikiRoot: string): string {
  return join(wikiLayout(wikiRoot).knowledge, 'proposals');
}

function closedDir(wikiRoot: string): string {
  return join(proposalsDir(wikiRoot), 'closed');
}

const PROPOSAL_ID = /^P-[0-9TZ-]+-[A-Za-z0-9.-]{1,40}$/;

function normalizeFact(text: string): string {
  return text.toLowerCase().replace(/[`*_>#|]/g, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * The facts of a draft that the entry does not already hold: each non-empty
 * line of its solution (bullet marks dropped), longer than a few words, whose
 * normalised text is not contained in the entry's normalised body.
 */
export function newFacts(draft: Pick<EntryDraft, 'solution'>, target: Pick<WikiEntry, 'body'>): string[] {
  const body = normalizeFact(target.body);
  const out: string[] = [];
  for (const raw of draft.solution.split('\n')) {
    const line = raw.replace(/^\s*[-*]\s+/, '').trim();
    if (line.length < 12 || /^commands:$/i.test(line)) continue;
    if (!body.includes(normalizeFact(line))) out.push(line);
  }
  return out;
}

/** Entry ids with an open audit against them (a person said the entry is wrong). */
export function entriesUnderAudit(wikiRoot: string): Set<string> {
  return new Set(listAudits(wikiRoot).open.map((a) => a.targetId));
}

export function fileProposal(
  wikiRoot: string,
  input: { kind: ProposalKind; reason: string; target: WikiEntry; draft: Pick<EntryDraft, 'solution' | 'tags' | 'confidence'>; facts: string[]; source: Proposal['source']; intentKey?: string },
  now: Date,
): Proposal {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const target = input.target.id.replace(/[^A-Za-z0-9.-]+/g, '-').slice(0, 40);
  let id = `P-${stamp}-${target}`;
  const dir = proposalsDir(wikiRoot);
  mkdirSync(dir, { recursive: true });
  for (let n = 2; existsSync(join(dir, `${id}.json`)); n += 1) id = `P-${stamp}-${target}.${n}`;
  const proposal: Proposal = {
    schemaVersion: 1,
    id,
    status: 'open',
    kind: input.kind,
    reason: input.reason,
    targetId: input.target.id,
    targetPath: input.target.relativePath,
    targetRequest: input.target.request,
    filedAt: now.toISOString(),
    source: input.source,
    ...(input.intentKey ? { intentKey: input.intentKey } : {}),
    newFacts: input.facts,
    draft: { solution: input.draft.solution, ...(input.draft.tags ? { tags: input.draft.tags } : {}), ...(input.draft.confidence !== undefined ? { confidence: input.draft.confidence } : {}) },
  };
  writeFileAtomic(join(dir, `${id}.json`), `${JSON.stringify(proposal, null, 2)}\n`, { root: wikiRoot });
  return proposal;
}

/**
 * A proposal file's JSON, or what is wrong with it. One that does not parse is named with the place only:
 * JSON.parse's message quotes the start of the file, and this one reaches the board and the API (a proposal
 * file that is a link to a key would show its first characters). One that cannot be read says so.
 */
function readProposalJson(file: string): { raw: unknown } | { problem: string } {
  let text: string;
  try {
    text = readRegularFile(file);
  } catch (err) {
    return { problem: `cannot be read (${(err as Error).message})` };
  }
  try {
    return { raw: JSON.parse(text) };
  } catch {
    return { problem: `not valid JSON (${jsonSyntaxWhere(text)})` };
  }
}

function readProposals(dir: string): { proposals: Proposal[]; problems: Array<{ file: string; reason: string }> } {
  const proposals: Proposal[] = [];
  const problems: Array<{ file: string; reason: string }> = [];
  if (!existsSync(dir)) return { proposals, problems };
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    const read = readProposalJson(file);
    if ('problem' in read) {
      problems.push({ file, reason: `${read.problem}; left as it is` });
      continue;
    }
    const checked = checkProposal(read.raw, name.slice(0, -'.json'.length));
    if ('proposal' in checked) proposals.push(checked.proposal);
    else problems.push({ file, reason: `${checked.problem}; left as it is` });
  }
  return { proposals: proposals.sort((a, b) => a.filedAt.localeCompare(b.filedAt) || a.id.localeCompare(b.id)), problems };
}

export function listProposals(wikiRoot: string): { open: Proposal[]; closed: Proposal[]; problems: Array<{ file: string; reason: string }> } {
  const open = readProposals(proposalsDir(wikiRoot));
  const closed = readProposals(closedDir(wikiRoot));
  return { open: open.proposals, closed: closed.proposals, problems: [...open.problems, ...closed.problems] };
}

function openProposal(wikiRoot: string, id: string): ReadProposal & { path: string } {
  if (!PROPOSAL_ID.test(id)) throw new MaestroError('BAD_INPUT', `"${id}" is not a proposal id (P-<time>-<entry id>).`);
  const path = join(proposalsDir(wikiRoot), `${id}.json`);
  // As the API answers a decision on a task: a closed proposal is a 409 (its state, not the request), an id it does not hold a 404.
  if (existsSync(join(closedDir(wikiRoot), `${id}.json`))) {
    rmSync(path, { force: true }); // close() crashed between its two steps: finish the removal
    throw new MaestroError('ILLEGAL_TRANSITION', `Proposal ${id} is already closed (accepted or dismissed); nothing was changed.`, { details: { proposalId: id } });
  }
  if (!existsSync(path)) throw new MaestroError('NOT_FOUND', `No proposal ${id} in ${proposalsDir(wikiRoot)}.`, { details: { proposalId: id } });
  const read = readProposalJson(path);
  if ('problem' in read) throw new MaestroError('CORRUPT_FILE', `${path}: ${read.problem}; it was left as it is.`, { details: { file: path } });
  const checked = checkProposal(read.raw, id);
  if ('problem' in checked) throw new MaestroError('CORRUPT_FILE', `${path}: ${checked.problem}; it was left as it is.`, { details: { file: path } });
  return { ...checked, path };
}

function close(wikiRoot: string, { proposal, raw, path }: ReturnType<typeof openProposal>, status: 'accepted' | 'dismissed', note: string | undefined, now: Date): Proposal {
  const closing = { status, closedAt: now.toISOString(), ...(note?.trim() ? { note: note.trim() } : {}) };
  mkdirSync(closedDir(wikiRoot), { recursive: true });
  // The file's keys we do not know are written back as they were.
  writeFileAtomic(join(closedDir(wikiRoot), `${proposal.id}.json`), `${JSON.stringify({ ...raw, ...closing }, null, 2)}\n`, { root: wikiRoot });
  // The closed copy is durable before the open one goes: a crash leaves both, never neither
  // (openProposal then finishes the removal instead of applying it twice).
  rmSync(path, { force: true });
  return { ...proposal, ...closing };
}

/** Applies the proposed update to its entry (the person's decision), then closes the proposal. */
export function acceptProposal(wikiRoot: string, id: string, ctx: { projectSlug: string; now: Date; note?: string }): { proposal: Proposal; entry: WikiEntry } {
  const opened = openProposal(wikiRoot, id);
  const { proposal } = opened;
  const target = listWikiEntries(wikiRoot).entries.find((e) => e.id === proposal.targetId);
  if (!target) throw new MaestroError('BAD_INPUT', `Proposal ${id} targets ${proposal.targetId}, which is no longer in the wiki; dismiss it instead.`);
  const entry = updateEntry(target, proposal.draft, { wikiRoot, projectSlug: ctx.projectSlug, source: proposal.source, ...(proposal.intentKey ? { intentKey: proposal.intentKey } : {}), now: ctx.now });
  return { proposal: close(wikiRoot, opened, 'accepted', ctx.note, ctx.now), entry };
}

export function dismissProposal(wikiRoot: string, id: string, ctx: { now: Date; note?: string }): Proposal {
  return close(wikiRoot, openProposal(wikiRoot, id), 'dismissed', ctx.note, ctx.now);
}
