import type { Dictionary } from './en.js';

export const zh: Dictionary = {
  app: { language: '语言', loading: '加载中…', unknownRoute: '没有“{{path}}”这个页面。', backToBoard: '返回看板' },
  conn: { live: '实时', connecting: '正在连接守护进程…', lost: '无法连接守护进程，正在重连…', reconnected: '已重新连接，看板已刷新' },
  nav: { label: '项目与页面', projects: '项目', screens: '页面', noProjects: '还没有项目。', board: '看板', metrics: '指标', settings: '设置', knowledge: '知识库', observer: '观察器' },
  lane: { backlog: '待办', planning: '规划', working: '进行中', done: '已完成', attention: '已停止' },
  board: {
    label: '任务看板', search: '搜索标题', statusFilter: '按状态筛选', allStatuses: '全部状态', showSuperseded: '显示已被取代的', total: '{{count}} 个任务',
    showMore: '再显示 {{count}} 个', loadFailed: '无法加载任务：{{message}}', pickProject: '请在左侧选择一个项目。',
  },
  status: {
    ready: '就绪', queued: '排队中', planning: '规划中', plan_review: '计划评审', spec_review: '规格评审', waiting_children: '等待子任务',
    executing: '执行中', awaiting_input: '等待输入', reviewing: '评审中', exec_review: '执行评审', merging: '合并中', done: '已完成',
    needs_attention: '需要处理', cancelled: '已取消', superseded: '已被取代',
  },
  complexity: { easy: '简单', medium: '中等', hard: '困难' },
  runKind: { plan: '规划', execute: '执行', review: '评审', conflict: '冲突解决' },
  runStatus: { running: '运行中', succeeded: '成功', failed: '失败', cancelled: '已取消' },
  detail: { label: '任务详情', close: '关闭任务', gone: '此任务已不存在', loadFailed: '无法加载任务', fields: '字段', graph: '依赖', graphLabel: '{{count}} 个任务的依赖图', plan: '计划', spec: '规格', subtasks: '子任务', proposed: '拟定的子任务', rawPlan: '计划原文' },
  field: {
    status: '状态', id: '编号', priority: '优先级', complexity: '复杂度', type: '类型', scope: '范围', version: '版本', attempt: '尝试次数',
    expected: '预期产出', ownedFiles: '负责的文件', updated: '更新时间', feedback: '反馈', lastError: '最近错误', title: '标题', deps: '依赖于',
  },
  gate: { waiting: '等待你处理：{{gate}}', reason: '理由（拒绝时必填）', approve: '批准', reject: '拒绝', needReason: '拒绝需要填写理由。', history: '审批记录', approved: '已批准', rejected: '已拒绝' },
  message: {
    replyTitle: '智能体提出了一个问题', injectTitle: '给运行中的智能体下指令', replyLabel: '你的回答', injectLabel: '下一轮的指令',
    send: '发送回答', inject: '发送指令', replied: '回答已发送。', injected: '指令已排队。',
  },
  live: { title: '实时输出', open: '实时', connecting: '连接中', reconnecting: '重连中', empty: '暂无输出：运行时输出会显示在这里。', result: '运行结束' },
  transcript: { title: '对话记录', search: '搜索对话记录', run: '运行', latestRun: '最近一次运行', go: '搜索', tail: '显示最后几行', matches: '匹配行数：{{count}}', tailOf: '共 {{total}} 行中的最后 {{shown}} 行' },
  runs: { title: '运行', none: '还没有运行。', kind: '类型', status: '状态', model: '模型', tokens: '输入 / 输出 token', cost: '费用', duration: '耗时', running: '运行中', total: '合计' },
  score: {
    title: '最近一次认领：得分', none: '调度器尚未认领此任务。', total: '得分 {{score}}，由 {{owner}} 于 {{at}} 认领', beat: '它胜过了 {{count}} 个其他就绪任务。',
    rankU: '排名（紧急度）', chainInertia: '链惯性', agingBonus: '等待加分', couplingPenalty: '耦合惩罚',
  },
  trace: { title: '追踪', show: '显示追踪', hide: '隐藏追踪' },
  settings: {
    title: '设置：{{name}}', tiers: '模型档位', checks: '检查', hooks: '钩子', limits: '限制', repoConfig: '这些设置由守护进程保存；仓库自带的 .maestro/config.json（如有）也会设置检查、限制和模型档位。', provider: '智能体提供方', notSet: '未设置（使用默认值）。',
    raw: '配置（JSON）', save: '保存', saved: '已保存。', badJson: '不是有效的 JSON：{{message}}', notObject: '配置必须是一个 JSON 对象。',
  },
  metrics: { title: '指标', byStatus: '各状态任务数', throughput: '吞吐量（每小时完成任务数）', durations: '运行耗时（p50 / p95）', cost: '各项目费用', noData: '暂无数据。', runs: '{{count}} 次运行', tokens: '输入 {{input}} / 输出 {{output}}' },
  knowledge: {
    title: '知识库', tab: { search: '搜索', review: '审核队列', audit: '审计' }, query: '搜索知识库', search: '搜索', facets: '分面', type: '类型', category: '类别', any: '不限',
    counts: '{{count}} 条结果（wiki {{wiki}}，代码 {{code}}）', chain: '演进', unavailable: '此守护进程不提供知识搜索。', queueEmpty: '没有待审核的内容。',
    matches: '匹配', evidence: '证据', accept: '接受', dismiss: '忽略', promote: '提升', auditClean: '审计未发现问题。', severity: '严重程度', where: '位置', message: '发现',
  },
  observer: {
    title: '观察器', sessions: '会话', noSessions: '还没有观察到的会话。', unavailable: '此守护进程不提供观察器。', explorations: '{{count}} 次探索', last: '最新',
    unreadable: '无法显示此会话：{{reason}}', flow: '流程图', tokens: 'Token：输入 {{input}} / 输出 {{output}}', knowledge: '知识', summary: '摘要',
    notSearched: '尚未搜索。', noKnowledge: '没有相关的既有知识。', noSummary: '还没有摘要。', tools: '{{count}} 次工具调用', errors: '{{count}} 个错误', wiki: 'wiki：{{status}}',
    status: { running: '运行中', complete: '已完成', interrupted: '已中断' },
  },
};
