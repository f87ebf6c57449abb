import type { Dictionary } from './en.js';

export const ja: Dictionary = {
  app: { language: '言語', loading: '読み込み中…', unknownRoute: '「{{path}}」というページはありません。', backToBoard: 'ボードに戻る' },
  conn: { live: 'ライブ', connecting: 'デーモンに接続中…', lost: 'デーモンに接続できません。再接続中…', reconnected: '再接続しました。ボードを再読み込みしました' },
  nav: { label: 'プロジェクトと画面', projects: 'プロジェクト', screens: '画面', noProjects: 'プロジェクトはまだありません。', board: 'ボード', metrics: 'メトリクス', settings: '設定', knowledge: 'ナレッジ', observer: 'オブザーバー' },
  lane: { backlog: 'バックログ', planning: '計画', working: '進行中', done: '完了', attention: '停止' },
  board: {
    label: 'タスクボード', search: 'タイトルを検索', statusFilter: '状態で絞り込む', allStatuses: 'すべての状態', showSuperseded: '置き換え済みを表示', total: 'タスク {{count}} 件',
    showMore: 'さらに {{count}} 件表示', loadFailed: 'タスクを読み込めませんでした: {{message}}', pickProject: '左でプロジェクトを選んでください。',
  },
  status: {
    ready: '準備完了', queued: '待機中', planning: '計画中', plan_review: '計画レビュー', spec_review: '仕様レビュー', waiting_children: 'サブタスク待ち',
    executing: '実行中', awaiting_input: '入力待ち', reviewing: 'レビュー中', exec_review: '実行レビュー', merging: 'マージ中', done: '完了',
    needs_attention: '要対応', cancelled: 'キャンセル済み', superseded: '置き換え済み',
  },
  complexity: { easy: 'やさしい', medium: '普通', hard: '難しい' },
  runKind: { plan: '計画', execute: '実行', review: 'レビュー', conflict: '競合解決' },
  runStatus: { running: '実行中', succeeded: '成功', failed: '失敗', cancelled: 'キャンセル済み' },
  detail: { label: 'タスクの詳細', close: 'タスクを閉じる', gone: 'このタスクはもう存在しません', loadFailed: 'タスクを読み込めませんでした', fields: '項目', graph: '依存関係', graphLabel: '{{count}} 件のタスクの依存グラフ', plan: '計画', spec: '仕様', subtasks: 'サブタスク', proposed: '提案されたサブタスク', rawPlan: '計画の原文' },
  field: {
    status: '状態', id: 'ID', priority: '優先度', complexity: '複雑さ', type: '種類', scope: '範囲', version: 'バージョン', attempt: '試行',
    expected: '期待される成果', ownedFiles: '担当ファイル', updated: '更新日時', feedback: 'フィードバック', lastError: '直近のエラー', title: 'タイトル', deps: '依存先',
  },
  gate: { waiting: 'あなたの判断待ち: {{gate}}', reason: '理由（却下には必須）', approve: '承認', reject: '却下', needReason: '却下には理由が必要です。', history: '承認履歴', approved: '承認済み', rejected: '却下済み' },
  message: {
    replyTitle: 'エージェントが質問しています', injectTitle: '実行中のエージェントに指示する', replyLabel: 'あなたの回答', injectLabel: '次のターンへの指示',
    send: '回答を送信', inject: '指示を送信', replied: '回答を送信しました。', injected: '指示をキューに入れました。',
  },
  live: { title: 'ライブ出力', open: 'ライブ', connecting: '接続中', reconnecting: '再接続中', empty: 'まだ出力はありません。実行中の出力がここに表示されます。', result: '実行終了' },
  transcript: { title: 'トランスクリプト', search: 'トランスクリプトを検索', run: '実行', latestRun: '最新の実行', go: '検索', tail: '最後の行を表示', matches: '一致した行: {{count}}', tailOf: '{{total}} 行のうち最後の {{shown}} 行' },
  runs: { title: '実行', none: 'まだ実行はありません。', kind: '種類', status: '状態', model: 'モデル', tokens: '入力 / 出力トークン', cost: 'コスト', duration: '所要時間', running: '実行中', total: '合計' },
  score: {
    title: '直近の取得: スコア', none: 'スケジューラーはまだこのタスクを取得していません。', total: 'スコア {{score}}、{{at}} に {{owner}} が取得', beat: '他の準備完了タスク {{count}} 件に勝ちました。',
    rankU: 'ランク（緊急度）', chainInertia: 'チェーン慣性', agingBonus: '待機ボーナス', couplingPenalty: '結合ペナルティ',
  },
  trace: { title: 'トレース', show: 'トレースを表示', hide: 'トレースを隠す' },
  settings: {
    title: '設定: {{name}}', tiers: 'モデル階層', checks: 'チェック', hooks: 'フック', limits: '制限', repoConfig: 'これらの設定はデーモンが保存します。リポジトリの .maestro/config.json があれば、チェック・制限・モデル階層もそこで設定されます。', provider: 'エージェントプロバイダー', notSet: '未設定（既定値を使用）。',
    raw: '設定（JSON）', save: '保存', saved: '保存しました。', badJson: '正しい JSON ではありません: {{message}}', notObject: '設定は JSON オブジェクトでなければなりません。',
  },
  metrics: { title: 'メトリクス', byStatus: '状態別タスク数', throughput: 'スループット（1 時間あたりの完了タスク）', durations: '実行時間（p50 / p95）', cost: 'プロジェクト別コスト', noData: 'まだデータがありません。', runs: '{{count}} 回の実行', tokens: '入力 {{input}} / 出力 {{output}}' },
  knowledge: {
    title: 'ナレッジ', tab: { search: '検索', review: 'レビュー待ち', audit: '監査' }, query: 'ナレッジを検索', search: '検索', facets: 'ファセット', type: '種類', category: 'カテゴリ', any: 'すべて',
    counts: '{{count}} 件（wiki {{wiki}}、コード {{code}}）', chain: '変遷', unavailable: 'このデーモンではナレッジ検索を利用できません。', queueEmpty: 'レビュー待ちはありません。',
    matches: '一致', evidence: '根拠', accept: '受け入れる', dismiss: '却下', promote: '昇格', auditClean: '監査で問題は見つかりませんでした。', severity: '重大度', where: '場所', message: '指摘',
  },
  observer: {
    title: 'オブザーバー', sessions: 'セッション', noSessions: '観察したセッションはまだありません。', unavailable: 'このデーモンではオブザーバーを利用できません。', explorations: '探索 {{count}} 件', last: '最新',
    unreadable: 'このセッションは表示できません: {{reason}}', flow: 'フローグラフ', tokens: 'トークン: 入力 {{input}} / 出力 {{output}}', knowledge: 'ナレッジ', summary: '要約',
    notSearched: 'まだ検索していません。', noKnowledge: '既存のナレッジはありません。', noSummary: 'まだ要約はありません。', tools: 'ツール {{count}} 回', errors: 'エラー {{count}} 件', wiki: 'wiki: {{status}}',
    status: { running: '実行中', complete: '完了', interrupted: '中断' },
  },
};
