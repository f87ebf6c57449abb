/**
 * REST client. Every failure becomes an ApiError carrying the server's code and
 * message (or a NETWORK code when the daemon is unreachable), so screens can
 * say what happened instead of showing a blank.
 */
import { useConnection } from '../stores/connection.js';
import { tokenHeaders } from './token.js';
import type {
  CancelBody,
  CancelResponse,
  ChecksResponse,
  DaemonList,
  DecisionList,
  DiffResponse,
  EventPage,
  FindingsResponse,
  Gate,
  GateBody,
  HealthResponse,
  LineComment,
  MessageBody,
  Metrics,
  ProjectConfigResponse,
  ProjectDetail,
  ProjectList,
  ProjectResponse,
  RejectBody,
  RejectResponse,
  RetryBody,
  RunList,
  RunMessageResponse,
  TaskBoardList,
  TaskDetail,
  TaskEdit,
  TaskInput,
  TaskResponse,
  TraceChain,
  TranscriptSearch,
} from './types.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Base URL of the daemon; empty means the page's own origin. */
let base = '';
export function setApiBase(url: string): void {
  base = url.replace(/\/$/, '');
}
export function apiUrl(path: string): string {
  return `${base}${path}`;
}

/**
 * A GET index.html started before this code loaded (the board's first data),
 * handed over once. Only a success is used; anything else asks again, so
 * errors read exactly as they do for any other request.
 */
async function early(method: string, path: string): Promise<string | null> {
  if (method !== 'GET' || base) return null;
  const bag = (globalThis as { __maestroEarly?: Record<string, Promise<{ ok: boolean; text: string }>> }).__maestroEarly;
  const pending = bag?.[path];
  if (!pending) return null;
  delete bag[path];
  try {
    const r = await pending;
    return r.ok ? r.text : null;
  } catch {
    return null;
  }
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const ready = await early(method, path);
  if (ready !== null) {
    try {
      return (ready ? JSON.parse(ready) : null) as T;
    } catch {
      // not JSON after all: ask again below
    }
  }
  let res: Response;
  try {
    res = await fetch(apiUrl(path), {
      method,
      // The token the board link left in this origin's storage (api/token.ts); X-Maestro-Client lets a bodyless write through the daemon's content-type check.
      headers: { ...tokenHeaders(), ...(body === undefined ? { 'x-maestro-client': 'web' } : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, 'NETWORK', `The daemon did not answer (${(err as Error).message}).`);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  // One place learns the browser holds no token: the board then says how to sign in, once, instead of an error per panel.
  if (res.status === 401) useConnection.getState().setUnauthorized(true);
  else if (res.ok) useConnection.getState().setUnauthorized(false);
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, e?.code ?? `HTTP_${res.status}`, e?.message ?? `${method} ${path} answered ${res.status}.`);
  }
  return json as T;
}

const q = (params: Record<string, string | number | undefined | null>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  const str = s.toString();
  return str ? `?${str}` : '';
};
const enc = encodeURIComponent;

export const api = {
  /** `ok` is false while the daemon reports a condition (a full disk, a read-only home). */
  health: () => request<HealthResponse>('GET', '/api/health'),
  projects: () => request<ProjectList>('GET', '/api/projects'),
  project: (id: string) => request<ProjectDetail>('GET', `/api/projects/${enc(id)}`),
  /** `basedOn`: the settings the change was made from, as read; changed since, the daemon answers 409 SETTINGS_CHANGED and saves nothing. */
  updateProjectConfig: (id: string, config: Record<string, unknown>, basedOn: Record<string, unknown>) => request<ProjectConfigResponse>('PATCH', `/api/projects/${enc(id)}`, { config, basedOn }),
  /** Archive (no new work, kept with its history) or restore a project. */
  archiveProject: (id: string, archive: boolean) => request<ProjectResponse>('POST', `/api/projects/${enc(id)}/${archive ? 'archive' : 'restore'}`, { who: 'web' }),
  /** The board's list: slim rows (`view=board`), a fraction of the full tasks' JSON. */
  tasks: (projectId: string, limit = 5000) => request<TaskBoardList>('GET', `/api/tasks${q({ projectId, limit, view: 'board' })}`),
  task: (id: string) => request<TaskDetail>('GET', `/api/tasks/${enc(id)}`),
  createTask: (input: TaskInput) => request<TaskResponse>('POST', '/api/tasks', input),
  /** Only the fields given change; refused while a run is in flight (TASK_BUSY) or once the task is final. */
  editTask: (id: string, edit: TaskEdit) => request<TaskResponse>('PATCH', `/api/tasks/${enc(id)}`, edit),
  /** `commit`: at exec_review, the head of the diff the person looked at (refused with STALE_REVIEW when another waits now). */
  approve: (id: string, gate: Gate, reason?: string, commit?: string) =>
    request<TaskResponse>('POST', `/api/tasks/${enc(id)}/approve`, { gate, ...(reason ? { reason } : {}), ...(commit ? { commit } : {}), who: 'web' } satisfies GateBody),
  /** Line comments (exec_review) go with the reason and reach the next version's prompt. */
  reject: (id: string, gate: Gate, reason: string, comments: LineComment[] = []) =>
    request<RejectResponse>('POST', `/api/tasks/${enc(id)}/reject`, { gate, reason, who: 'web', ...(comments.length ? { comments } : {}) } satisfies RejectBody),
  reply: (id: string, message: string) => request<RunMessageResponse>('POST', `/api/tasks/${enc(id)}/reply`, { message, who: 'web' } satisfies MessageBody),
  inject: (id: string, message: string) => request<RunMessageResponse>('POST', `/api/tasks/${enc(id)}/inject`, { message, who: 'web' } satisfies MessageBody),
  cancel: (id: string) => request<CancelResponse>('POST', `/api/tasks/${enc(id)}/cancel`, { who: 'web' } satisfies CancelBody),
  /** `fresh`: a new version from the current main; `commit`: merge a merge conflict resolved by hand (the answer's task is the new version for `fresh`). */
  retry: (id: string, how: { fresh: true } | { commit: string } | Record<string, never> = {}) => request<TaskResponse>('POST', `/api/tasks/${enc(id)}/retry`, { ...how, who: 'web' } satisfies RetryBody),
  searchTranscript: (id: string, text: string, runId?: string) => request<TranscriptSearch>('GET', `/api/tasks/${enc(id)}/transcript${q({ q: text, runId, limit: 500 })}`),
  /**
   * The last lines of a transcript (JSON lines). Read as a stream keeping a
   * rolling window, so a transcript of any length costs the page `maxLines`.
   */
  async transcript(id: string, runId?: string, maxLines = 2000): Promise<{ lines: string[]; total: number }> {
    let res: Response;
    try {
      res = await fetch(apiUrl(`/api/tasks/${enc(id)}/transcript${q({ runId })}`), { headers: tokenHeaders() });
    } catch (err) {
      throw new ApiError(0, 'NETWORK', `The daemon did not answer (${(err as Error).message}).`);
    }
    if (!res.ok || !res.body) throw new ApiError(res.status, `HTTP_${res.status}`, `The transcript could not be read (${res.status}).`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const lines: string[] = [];
    let total = 0;
    let rest = '';
    const keep = (line: string) => {
      if (!line) return;
      total++;
      lines.push(line.length > 4000 ? `${line.slice(0, 4000)}…` : line);
      if (lines.length > maxLines) lines.shift();
    };
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const parts = (rest + value).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) keep(line);
    }
    keep(rest);
    return { lines, total };
  },
  /** The version's branch against its merge base; `file` asks for one collapsed file whole. */
  diff: (id: string, opts: { version?: number; file?: string } = {}) => request<DiffResponse>('GET', `/api/tasks/${enc(id)}/diff${q({ version: opts.version, file: opts.file })}`),
  checks: (id: string, version?: number) => request<ChecksResponse>('GET', `/api/tasks/${enc(id)}/checks${q({ version })}`),
  findings: (id: string, version?: number) => request<FindingsResponse>('GET', `/api/tasks/${enc(id)}/findings${q({ version })}`),
  runs: (taskId: string) => request<RunList>('GET', `/api/runs${q({ taskId })}`),
  trace: (traceId: string) => request<TraceChain>('GET', `/api/traces/${enc(traceId)}`),
  metrics: (projectId?: string) => request<Metrics>('GET', `/api/metrics${q({ projectId })}`),
  events: (params: { projectId?: string; type?: string; after?: number; before?: number; order?: 'oldest' | 'newest'; limit?: number }) =>
    request<EventPage>('GET', `/api/events${q(params)}`),
  /** The daemons sharing this daemon's database; 404 from an API with no daemon behind it. */
  daemons: () => request<DaemonList>('GET', '/api/daemons'),
  decisions: (taskId: string) => request<DecisionList>('GET', `/api/scheduler/decisions${q({ taskId })}`),
};
