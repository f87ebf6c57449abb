/**
 * The run folder a sandboxed agent sees (src/lib/sandbox.ts). The run directory holds what the worker
 * writes and the daemon trusts (outbox.ndjson, stages.json, transcript.jsonl, checks/): an agent that could
 * write there could forge a result, or plant a link the worker would then write through. So the sandbox
 * mounts a scratch folder at the run directory's path instead, with a copy of run.json and of the run's
 * knowledge ledger: the knowledge MCP tools and `maestro knowledge` record loads and stage candidates there
 * as they would in the run directory (`.workflow/sessions/<s>/runs/<r>` links to it). The scratch folder lives
 * beside the run directory and goes after the call; a worker killed mid-call leaves it, and the daemon removes it.
 *
 * After the call, what the agent added is carried into the run's ledger, under its lock, the way the
 * ledger's own operations add it: the loads it recorded, and the candidates it staged. Nothing else: an
 * agent cannot mark a candidate promoted or rewrite what the ledger held before. A scratch ledger that is
 * not a regular file, or not a ledger (CORRUPT_FILE), is left out, and the run's transcript says why.
 */
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { emptyLedger, readLedger, recordInto, stageInto, updateLedger, type Ledger, type LedgerInput } from '../knowledge/lifecycle/ledger/ledger.js';
import { readRunFile } from '../knowledge/lifecycle/session/store.js';

const LEDGER = 'knowledge-delta.json';
const RUN_FILE = 'run.json';
/** More loads of one entry in one call than any agent makes: a scratch ledger claiming more is not believed. */
const MAX_NEW_LOADS = 1000;
/**
 * What one call may add, far beyond what an agent does through the tools (whose stage_knowledge takes a title of
 * 200 characters and content of 8,000): the worker reads and replays what the agent wrote, outside the sandbox.
 */
const MAX_LEDGER_BYTES = 4 * 1024 * 1024;
const MAX_NEW_ENTRIES = 1000;
const MAX_NEW_CANDIDATES = 100;
const MAX_TITLE = 200;
const MAX_CONTENT = 8000;

export interface AgentRunFolder {
  /** The folder mounted at the run directory's path. */
  scratch: string;
  /** Carries the agent's loads and staged candidates into the run's ledger; a warning when it could not. */
  settle(): string | null;
  remove(): void;
}

/** The ledger as the agent is given it; a corrupt one is the agent's copy too, and what it records there is refused at settle. */
function readBase(path: string): Ledger | null {
  try {
    return readLedger(path);
  } catch {
    return null;
  }
}

const inputKey = (i: Pick<LedgerInput, 'knowledge_id' | 'signal' | 'source'>) => `${i.knowledge_id}\u0000${i.signal}\u0000${i.source}`;

/**
 * Where a run's scratch folders go: beside its directory, in the daemon's home (private to its user), not in the
 * system's temporary folder, where a name known in advance could be taken first by another user.
 */
const SCRATCH = '.scratch';
const scratchRoot = (runDir: string) => `${runDir}${SCRATCH}`;
/** The scratch folders of this process's calls under way (a run's reviews run side by side). */
const inUse = new Set<string>();

/**
 * Removes the run's scratch folders: those of a worker killed mid-call (its task cancelled, or its worker
 * silent), which could not remove its own. The daemon calls it once it has killed the run's worker.
 */
export function removeRunScratch(runDir: string): void {
  rmSync(scratchRoot(runDir), { recursive: true, force: true, maxRetries: 3 });
}

/**
 * The scratch folders under a home's run directories (`<runs>/<task>/<run>.scratch`), by run id: read without
 * blocking, since a home keeps every run it ever had.
 */
export async function scratchFoldersIn(runsRoot: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const tasks = await readdir(runsRoot, { withFileTypes: true }).catch(() => []);
  for (const task of tasks.filter((d) => d.isDirectory())) {
    const entries = await readdir(join(runsRoot, task.name), { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory() && e.name.endsWith(SCRATCH)) found.set(e.name.slice(0, -SCRATCH.length), join(runsRoot, task.name, e.name));
  }
  return found;
}

/** The run's folders no call of this process is using are a killed worker's (the run resumed on another since). */
function removeStale(root: string): void {
  if (!existsSync(root)) return;
  for (const name of readdirSync(root)) if (!inUse.has(join(root, name))) rmSync(join(root, name), { recursive: true, force: true });
}

export function agentRunFolder(runDir: string): AgentRunFolder {
  const root = scratchRoot(runDir);
  removeStale(root);
  mkdirSync(root, { recursive: true });
  const scratch = mkdtempSync(join(root, 'call-'));
  inUse.add(scratch);
  const ledgerPath = join(runDir, LEDGER);
  for (const name of [RUN_FILE, LEDGER]) if (existsSync(join(runDir, name))) copyFileSync(join(runDir, name), join(scratch, name));
  const base = readBase(ledgerPath);
  return {
    scratch,
    remove: () => {
      inUse.delete(scratch);
      // The run's folder goes with its last call under way (the others there, if any, were a killed worker's).
      const last = ![...inUse].some((dir) => dir.startsWith(`${root}/`));
      rmSync(last ? root : scratch, { recursive: true, force: true });
    },
    settle(): string | null {
      const file = join(scratch, LEDGER);
      const st = lstatSync(file, { throwIfNoEntry: false });
      if (!st) return null;
      if (!st.isFile()) return `The agent's knowledge records were not kept: ${LEDGER} in its run folder is not a file.`;
      if (st.size > MAX_LEDGER_BYTES) return `The agent's knowledge records were not kept: ${LEDGER} in its run folder is ${st.size} bytes, more than ${MAX_LEDGER_BYTES}.`;
      let theirs: Ledger | null;
      try {
        theirs = readLedger(file);
      } catch (err) {
        return `The agent's knowledge records were not kept: ${(err as Error).message}`;
      }
      if (!theirs || !existsSync(join(runDir, RUN_FILE))) return null;
      const run = readRunFile(join(runDir, RUN_FILE));
      const before = new Map((base?.inputs ?? []).map((i) => [inputKey(i), i.count]));
      const staged = new Set((base?.candidates ?? []).map((c) => c.candidate_id));
      const loads = theirs.inputs.map((i) => ({ i, added: Math.min(MAX_NEW_LOADS, i.count - (before.get(inputKey(i)) ?? 0)) })).filter((x) => x.added > 0);
      const refused: string[] = [];
      if (loads.length > MAX_NEW_ENTRIES) refused.push(`${loads.length - MAX_NEW_ENTRIES} of ${loads.length} loaded entries (more than ${MAX_NEW_ENTRIES} in one call)`);
      loads.splice(MAX_NEW_ENTRIES);
      const fresh = theirs.candidates.filter((c) => {
        if (staged.has(c.candidate_id)) return false;
        if (c.title.length <= MAX_TITLE && c.content.length <= MAX_CONTENT) return true;
        refused.push(`"${c.title.slice(0, 60)}": a title over ${MAX_TITLE} characters or content over ${MAX_CONTENT}`);
        return false;
      });
      if (fresh.length > MAX_NEW_CANDIDATES) refused.push(`${fresh.length - MAX_NEW_CANDIDATES} of ${fresh.length} candidates (more than ${MAX_NEW_CANDIDATES} in one call)`);
      fresh.splice(MAX_NEW_CANDIDATES);
      if (!loads.length && !fresh.length) return refused.length ? `Knowledge records the agent made were refused: ${refused.join('; ')}` : null;
      updateLedger(ledgerPath, () => emptyLedger(run.session_id, run.run_id, new Date().toISOString()), (l) => {
        const now = new Date().toISOString();
        for (const { i, added } of loads) for (let n = 0; n < added; n++) recordInto(l, i.knowledge_id, i.signal, i.source, i.evidence ?? [], now);
        for (const c of fresh) {
          try {
            stageInto(l, { target: c.target, action: c.action, title: c.title, content: c.content, category: c.category, source_kind: c.source_kind, evidence_refs: c.evidence_refs }, now, ledgerPath);
          } catch (err) {
            refused.push((err as Error).message); // restaged with another action: the ledger refuses it, as it would have
          }
        }
      });
      return refused.length ? `Knowledge records the agent made were refused: ${refused.join('; ')}` : null;
    },
  };
}
