/** English: the reference dictionary; every other language must have exactly these keys (checked by the type). */
export const en = {
  app: { language: 'Language', loading: 'Loading…', unknownRoute: 'There is no page at "{{path}}".', backToBoard: 'Back to the board' },
  conn: { live: 'Live', connecting: 'Connecting to the daemon…', lost: 'The daemon is unreachable; reconnecting…', reconnected: 'Reconnected; the board was reloaded' },
  nav: { label: 'Projects and screens', projects: 'Projects', screens: 'Screens', noProjects: 'No projects yet.', board: 'Board', metrics: 'Metrics', settings: 'Settings', knowledge: 'Knowledge', observer: 'Observer' },
  lane: { backlog: 'Backlog', planning: 'Planning', working: 'In progress', done: 'Done', attention: 'Stopped' },
  board: {
    label: 'Task board',
    search: 'Search titles',
    statusFilter: 'Filter by status',
    allStatuses: 'All statuses',
    showSuperseded: 'Show superseded',
    total: '{{count}} tasks',
    showMore: 'Show {{count}} more',
    loadFailed: 'The tasks could not be loaded: {{message}}',
    pickProject: 'Pick a project on the left.',
  },
  status: {
    ready: 'ready', queued: 'queued', planning: 'planning', plan_review: 'plan review', spec_review: 'spec review', waiting_children: 'waiting for subtasks',
    executing: 'executing', awaiting_input: 'awaiting input', reviewing: 'reviewing', exec_review: 'execution review', merging: 'merging', done: 'done',
    needs_attention: 'needs attention', cancelled: 'cancelled', superseded: 'superseded',
  },
  complexity: { easy: 'easy', medium: 'medium', hard: 'hard' },
  runKind: { plan: 'plan', execute: 'execute', review: 'review', conflict: 'conflict' },
  runStatus: { running: 'running', succeeded: 'succeeded', failed: 'failed', cancelled: 'cancelled' },
  detail: {
    label: 'Task detail', close: 'Close the task', gone: 'This task no longer exists', loadFailed: 'The task could not be loaded',
    fields: 'Fields', graph: 'Dependencies', graphLabel: 'Dependency graph of {{count}} tasks', plan: 'Plan', spec: 'Specification', subtasks: 'Subtasks', proposed: 'Proposed subtasks', rawPlan: 'The plan as written',
  },
  field: {
    status: 'Status', id: 'Id', priority: 'Priority', complexity: 'Complexity', type: 'Type', scope: 'Scope', version: 'Version', attempt: 'Attempt',
    expected: 'Expected output', ownedFiles: 'Owned files', updated: 'Updated', feedback: 'Feedback', lastError: 'Last error', title: 'Title', deps: 'Depends on',
  },
  gate: {
    waiting: 'Waiting for you: {{gate}}', reason: 'Reason (required to reject)', approve: 'Approve', reject: 'Reject', needReason: 'A rejection needs a reason.',
    history: 'Approvals', approved: 'approved', rejected: 'rejected',
  },
  message: {
    replyTitle: 'The agent asks a question', injectTitle: 'Instruct the running agent', replyLabel: 'Your answer', injectLabel: 'An instruction for its next turn',
    send: 'Send the answer', inject: 'Send the instruction', replied: 'Answer sent.', injected: 'Instruction queued.',
  },
  live: { title: 'Live output', open: 'live', connecting: 'connecting', reconnecting: 'reconnecting', empty: 'Nothing yet: the output appears here while a run works.', result: 'run finished' },
  transcript: {
    title: 'Transcript', search: 'Search the transcript', run: 'Run', latestRun: 'Latest run', go: 'Search', tail: 'Show the last lines',
    matches: 'Matching lines: {{count}}', tailOf: 'The last {{shown}} of {{total}} lines',
  },
  runs: { title: 'Runs', none: 'No runs yet.', kind: 'Kind', status: 'Status', model: 'Model', tokens: 'Tokens in / out', cost: 'Cost', duration: 'Duration', running: 'running', total: 'Total' },
  score: {
    title: 'Last claim: score', none: 'The scheduler has not claimed this task.', total: 'Score {{score}}, claimed by {{owner}} at {{at}}', beat: 'It beat {{count}} other ready tasks.',
    rankU: 'Rank (urgency)', chainInertia: 'Chain inertia', agingBonus: 'Aging bonus', couplingPenalty: 'Coupling penalty',
  },
  trace: { title: 'Trace', show: 'Show the trace', hide: 'Hide the trace' },
  settings: {
    title: 'Settings: {{name}}', tiers: 'Model tiers', checks: 'Checks', hooks: 'Hooks', limits: 'Limits', repoConfig: 'These settings are stored by the daemon; the repository’s own .maestro/config.json, when present, also sets checks, limits and model tiers.', provider: 'Agent provider', notSet: 'Not set (defaults apply).',
    raw: 'Configuration (JSON)', save: 'Save', saved: 'Saved.', badJson: 'Not valid JSON: {{message}}', notObject: 'The configuration must be a JSON object.',
  },
  metrics: {
    title: 'Metrics', byStatus: 'Tasks by status', throughput: 'Throughput (tasks done per hour)', durations: 'Run durations (p50 / p95)', cost: 'Cost by project',
    noData: 'No data yet.', runs: '{{count}} runs', tokens: '{{input}} in / {{output}} out',
  },
  knowledge: {
    title: 'Knowledge', tab: { search: 'Search', review: 'Review queue', audit: 'Audit' }, query: 'Search the knowledge', search: 'Search', facets: 'Facets',
    type: 'Type', category: 'Category', any: 'Any', counts: '{{count}} results ({{wiki}} wiki, {{code}} code)', chain: 'Evolution', noResults: 'Nothing matched.',
    unavailable: 'This part of the knowledge is not available on this daemon.', pickProject: 'Pick a project on the left.', queueEmpty: 'Nothing waits for review. Candidates appear here when an agent\'s run report (.maestro/report.md) lists accepted decisions or locked constraints, or when someone runs `maestro knowledge stage`.', searchHint: 'Knowledge is the project\'s specs (.workflow/specs), knowhow (.workflow/knowhow) and the observer\'s wiki. It fills as agents report decisions and constraints (review and promote them under Review), or with `maestro spec add` and `maestro knowhow add`. Type words to search it.', auditEmpty: 'No specs or knowhow yet, so there is nothing to audit. Promote candidates under Review, or add entries with `maestro spec add` and `maestro knowhow add`.',
    matches: 'Matches', evidence: 'Evidence', supersedes: 'Supersedes', supersededBy: 'Superseded by', current: 'this entry', related: 'Related',
    session: 'Session {{id}}', sessionError: 'This session cannot be reviewed: {{message}}', candidates: '{{count}} candidates',
    receipt: 'Receipt', disposition: 'Disposition', eligibility: 'Eligibility', noMatches: 'No similar knowledge.', inputs: 'Knowledge this session used',
    reconcile: 'Reconcile', reconcileHint: 'Some receipts are missing or stale; reconcile them before resolving or promoting.',
    resolveAs: 'Resolve as', target: 'Target', reason: 'Reason', resolve: 'Resolve', needReason: 'Say why: a reason is required.', needTarget: 'Pick the knowledge it relates to.',
    promote: 'Promote', resolvedAs: 'Resolved: {{reason}}', promoted: 'Promoted as {{ids}}.', notPromoted: 'Not promoted: {{why}}', done: 'Done.',
    as: { duplicate: 'duplicate', related: 'related', conflict: 'conflict', supersede: 'supersedes it', unique: 'unique' },
    receiptState: { missing: 'missing', stale: 'stale', fresh: 'fresh' },
    dispositionName: { unique: 'unique', exact_duplicate: 'exact duplicate', semantic_duplicate: 'near duplicate', extends: 'extends', related: 'related', potential_conflict: 'possible conflict', supersede_candidate: 'may supersede' },
    eligibilityName: { eligible: 'eligible', review_required: 'review required', suppressed: 'suppressed' },
    statusName: { draft: 'draft', pending: 'pending', promoting: 'promoting', promoted: 'promoted', rejected: 'rejected' },
    auditClean: 'The audit found nothing.', severity: 'Priority', where: 'Target', message: 'Finding', store: 'Store', action: 'Suggested',
    actionName: { observe: 'observe', review: 'review', deprecate: 'deprecate' },
    auditSummary: 'Specs: {{specActive}} active of {{specTotal}} · know-how: {{khActive}} active of {{khTotal}} · sessions: {{sessions}} · pending: {{pending}} · promoted: {{promoted}}',
    generated: 'Generated {{at}}', prunePlan: 'Prune plan', showPlan: 'Show the prune plan', planEmpty: 'Nothing to prune.', planHint: 'Applying the plan is done from the command line: maestro knowledge audit --prune --apply',
  },
  observer: {
    load: { hit: 'up to date', miss: 'missing', corrupted: 'unreadable', expired: 'workspace gone', stale: 'behind its transcript' },
    updated: 'Updated at {{time}}',
    title: 'Observer', sessions: 'Sessions', noSessions: 'No observed sessions yet.', unavailable: 'The observer is not available on this daemon.',
    explorations: '{{count}} explorations', last: 'latest', unreadable: 'This session cannot be shown: {{reason}}', flow: 'Flow graph',
    tokens: 'Tokens: {{input}} in / {{output}} out', knowledge: 'Knowledge', summary: 'Summary', notSearched: 'Not searched yet.',
    noKnowledge: 'No prior knowledge.', noSummary: 'No summary yet.', tools: '{{count}} tools', errors: '{{count}} errors', wiki: 'wiki: {{status}}',
    status: { running: 'running', complete: 'complete', interrupted: 'interrupted' },
  },
};

type Deep<T> = { [K in keyof T]: T[K] extends string ? string : Deep<T[K]> };
export type Dictionary = Deep<typeof en>;
