import type { Dictionary } from './en.js';

export const es: Dictionary = {
  app: { language: 'Idioma', loading: 'Cargando…', unknownRoute: 'No hay ninguna página en «{{path}}».', backToBoard: 'Volver al tablero' },
  conn: { live: 'En vivo', connecting: 'Conectando con el daemon…', lost: 'El daemon no responde; reconectando…', reconnected: 'Reconectado; el tablero se recargó' },
  nav: { label: 'Proyectos y pantallas', projects: 'Proyectos', screens: 'Pantallas', noProjects: 'Aún no hay proyectos.', board: 'Tablero', metrics: 'Métricas', settings: 'Ajustes', knowledge: 'Conocimiento', observer: 'Observador' },
  lane: { backlog: 'Pendientes', planning: 'Planificación', working: 'En curso', done: 'Hechas', attention: 'Detenidas' },
  board: {
    label: 'Tablero de tareas', search: 'Buscar en los títulos', statusFilter: 'Filtrar por estado', allStatuses: 'Todos los estados', showSuperseded: 'Mostrar reemplazadas', total: '{{count}} tareas',
    showMore: 'Mostrar {{count}} más', loadFailed: 'No se pudieron cargar las tareas: {{message}}', pickProject: 'Elige un proyecto a la izquierda.',
  },
  status: {
    ready: 'lista', queued: 'en cola', planning: 'planificando', plan_review: 'revisión del plan', spec_review: 'revisión de la especificación', waiting_children: 'esperando subtareas',
    executing: 'ejecutando', awaiting_input: 'esperando respuesta', reviewing: 'revisando', exec_review: 'revisión de la ejecución', merging: 'fusionando', done: 'hecha',
    needs_attention: 'requiere atención', cancelled: 'cancelada', superseded: 'reemplazada',
  },
  complexity: { easy: 'fácil', medium: 'media', hard: 'difícil' },
  runKind: { plan: 'plan', execute: 'ejecución', review: 'revisión', conflict: 'conflicto' },
  runStatus: { running: 'en curso', succeeded: 'correcta', failed: 'fallida', cancelled: 'cancelada' },
  detail: { label: 'Detalle de la tarea', close: 'Cerrar la tarea', gone: 'Esta tarea ya no existe', loadFailed: 'No se pudo cargar la tarea', fields: 'Campos', graph: 'Dependencias', graphLabel: 'Grafo de dependencias de {{count}} tareas', plan: 'Plan', spec: 'Especificación', subtasks: 'Subtareas', proposed: 'Subtareas propuestas', rawPlan: 'El plan tal como se escribió' },
  field: {
    status: 'Estado', id: 'Id', priority: 'Prioridad', complexity: 'Complejidad', type: 'Tipo', scope: 'Alcance', version: 'Versión', attempt: 'Intento',
    expected: 'Resultado esperado', ownedFiles: 'Archivos propios', updated: 'Actualizada', feedback: 'Comentarios', lastError: 'Último error', title: 'Título', deps: 'Depende de',
  },
  gate: { waiting: 'Te espera: {{gate}}', reason: 'Motivo (obligatorio para rechazar)', approve: 'Aprobar', reject: 'Rechazar', needReason: 'Un rechazo necesita un motivo.', history: 'Aprobaciones', approved: 'aprobado', rejected: 'rechazado' },
  message: {
    replyTitle: 'El agente hace una pregunta', injectTitle: 'Dar una instrucción al agente en curso', replyLabel: 'Tu respuesta', injectLabel: 'Una instrucción para su siguiente turno',
    send: 'Enviar la respuesta', inject: 'Enviar la instrucción', replied: 'Respuesta enviada.', injected: 'Instrucción en cola.',
  },
  live: { title: 'Salida en vivo', open: 'en vivo', connecting: 'conectando', reconnecting: 'reconectando', empty: 'Nada aún: la salida aparece aquí mientras trabaja una ejecución.', result: 'ejecución terminada' },
  transcript: { title: 'Transcripción', search: 'Buscar en la transcripción', run: 'Ejecución', latestRun: 'Última ejecución', go: 'Buscar', tail: 'Ver las últimas líneas', matches: 'Líneas encontradas: {{count}}', tailOf: 'Las últimas {{shown}} de {{total}} líneas' },
  runs: { title: 'Ejecuciones', none: 'Aún no hay ejecuciones.', kind: 'Tipo', status: 'Estado', model: 'Modelo', tokens: 'Tokens entrada / salida', cost: 'Coste', duration: 'Duración', running: 'en curso', total: 'Total' },
  score: {
    title: 'Última asignación: puntuación', none: 'El planificador aún no ha tomado esta tarea.', total: 'Puntuación {{score}}, tomada por {{owner}} a las {{at}}', beat: 'Superó a otras {{count}} tareas listas.',
    rankU: 'Rango (urgencia)', chainInertia: 'Inercia de cadena', agingBonus: 'Bono por espera', couplingPenalty: 'Penalización por acoplamiento',
  },
  trace: { title: 'Traza', show: 'Mostrar la traza', hide: 'Ocultar la traza' },
  settings: {
    title: 'Ajustes: {{name}}', tiers: 'Niveles de modelo', checks: 'Comprobaciones', hooks: 'Hooks', limits: 'Límites', repoConfig: 'El daemon guarda estos ajustes; el .maestro/config.json del propio repositorio, si existe, también define comprobaciones, límites y niveles de modelo.', provider: 'Proveedor del agente', notSet: 'Sin definir (se usan los valores por defecto).',
    raw: 'Configuración (JSON)', save: 'Guardar', saved: 'Guardado.', badJson: 'JSON no válido: {{message}}', notObject: 'La configuración debe ser un objeto JSON.',
  },
  metrics: { title: 'Métricas', byStatus: 'Tareas por estado', throughput: 'Rendimiento (tareas hechas por hora)', durations: 'Duración de las ejecuciones (p50 / p95)', cost: 'Coste por proyecto', noData: 'Aún no hay datos.', runs: '{{count}} ejecuciones', tokens: '{{input}} entrada / {{output}} salida' },
  knowledge: {
    title: 'Conocimiento', tab: { search: 'Buscar', review: 'Cola de revisión', audit: 'Auditoría' }, query: 'Buscar en el conocimiento', search: 'Buscar', facets: 'Facetas', type: 'Tipo', category: 'Categoría', any: 'Cualquiera',
    counts: '{{count}} resultados ({{wiki}} wiki, {{code}} código)', chain: 'Evolución', unavailable: 'La búsqueda de conocimiento no está disponible en este daemon.', queueEmpty: 'Nada espera revisión.',
    matches: 'Coincidencias', evidence: 'Evidencia', accept: 'Aceptar', dismiss: 'Descartar', promote: 'Promover', auditClean: 'La auditoría no encontró nada.', severity: 'Gravedad', where: 'Dónde', message: 'Hallazgo',
  },
  observer: {
    title: 'Observador', sessions: 'Sesiones', noSessions: 'Aún no hay sesiones observadas.', unavailable: 'El observador no está disponible en este daemon.', explorations: '{{count}} exploraciones', last: 'última',
    unreadable: 'Esta sesión no se puede mostrar: {{reason}}', flow: 'Grafo de flujo', tokens: 'Tokens: {{input}} entrada / {{output}} salida', knowledge: 'Conocimiento', summary: 'Resumen',
    notSearched: 'Aún sin buscar.', noKnowledge: 'Sin conocimiento previo.', noSummary: 'Aún sin resumen.', tools: '{{count}} herramientas', errors: '{{count}} errores', wiki: 'wiki: {{status}}',
    status: { running: 'en curso', complete: 'completa', interrupted: 'interrumpida' },
  },
};
