import type { Dictionary } from './en.js';

export const fr: Dictionary = {
  app: { language: 'Langue', loading: 'Chargement…', unknownRoute: 'Il n’y a pas de page à « {{path}} ».', backToBoard: 'Retour au tableau' },
  conn: { live: 'En direct', connecting: 'Connexion au démon…', lost: 'Le démon est injoignable ; reconnexion…', reconnected: 'Reconnecté ; le tableau a été rechargé' },
  nav: { label: 'Projets et écrans', projects: 'Projets', screens: 'Écrans', noProjects: 'Aucun projet pour l’instant.', board: 'Tableau', metrics: 'Mesures', settings: 'Réglages', knowledge: 'Connaissances', observer: 'Observateur' },
  lane: { backlog: 'À faire', planning: 'Planification', working: 'En cours', done: 'Terminées', attention: 'Arrêtées' },
  board: {
    label: 'Tableau des tâches', search: 'Rechercher dans les titres', statusFilter: 'Filtrer par statut', allStatuses: 'Tous les statuts', showSuperseded: 'Afficher les remplacées', total: '{{count}} tâches',
    showMore: 'Afficher {{count}} de plus', loadFailed: 'Impossible de charger les tâches : {{message}}', pickProject: 'Choisissez un projet à gauche.',
  },
  status: {
    ready: 'prête', queued: 'en file', planning: 'planification', plan_review: 'revue du plan', spec_review: 'revue de la spécification', waiting_children: 'attend ses sous-tâches',
    executing: 'exécution', awaiting_input: 'attend une réponse', reviewing: 'relecture', exec_review: 'revue de l’exécution', merging: 'fusion', done: 'terminée',
    needs_attention: 'à examiner', cancelled: 'annulée', superseded: 'remplacée',
  },
  complexity: { easy: 'facile', medium: 'moyenne', hard: 'difficile' },
  runKind: { plan: 'plan', execute: 'exécution', review: 'relecture', conflict: 'conflit' },
  runStatus: { running: 'en cours', succeeded: 'réussie', failed: 'échouée', cancelled: 'annulée' },
  detail: { label: 'Détail de la tâche', close: 'Fermer la tâche', gone: 'Cette tâche n’existe plus', loadFailed: 'Impossible de charger la tâche', fields: 'Champs', graph: 'Dépendances', graphLabel: 'Graphe des dépendances de {{count}} tâches', plan: 'Plan', spec: 'Spécification', subtasks: 'Sous-tâches', proposed: 'Sous-tâches proposées', rawPlan: 'Le plan tel qu’écrit' },
  field: {
    status: 'Statut', id: 'Id', priority: 'Priorité', complexity: 'Complexité', type: 'Type', scope: 'Portée', version: 'Version', attempt: 'Tentative',
    expected: 'Résultat attendu', ownedFiles: 'Fichiers attribués', updated: 'Mise à jour', feedback: 'Retour', lastError: 'Dernière erreur', title: 'Titre', deps: 'Dépend de',
  },
  gate: { waiting: 'En attente de vous : {{gate}}', reason: 'Motif (obligatoire pour rejeter)', approve: 'Approuver', reject: 'Rejeter', needReason: 'Un rejet demande un motif.', history: 'Approbations', approved: 'approuvé', rejected: 'rejeté' },
  message: {
    replyTitle: 'L’agent pose une question', injectTitle: 'Donner une consigne à l’agent en cours', replyLabel: 'Votre réponse', injectLabel: 'Une consigne pour son prochain tour',
    send: 'Envoyer la réponse', inject: 'Envoyer la consigne', replied: 'Réponse envoyée.', injected: 'Consigne en file.',
  },
  live: { title: 'Sortie en direct', open: 'en direct', connecting: 'connexion', reconnecting: 'reconnexion', empty: 'Rien pour l’instant : la sortie s’affiche ici pendant une exécution.', result: 'exécution terminée' },
  transcript: { title: 'Transcription', search: 'Rechercher dans la transcription', run: 'Exécution', latestRun: 'Dernière exécution', go: 'Rechercher', tail: 'Voir les dernières lignes', matches: 'Lignes trouvées : {{count}}', tailOf: 'Les {{shown}} dernières lignes sur {{total}}' },
  runs: { title: 'Exécutions', none: 'Aucune exécution pour l’instant.', kind: 'Type', status: 'Statut', model: 'Modèle', tokens: 'Jetons entrée / sortie', cost: 'Coût', duration: 'Durée', running: 'en cours', total: 'Total' },
  score: {
    title: 'Dernière prise : score', none: 'L’ordonnanceur n’a pas encore pris cette tâche.', total: 'Score {{score}}, prise par {{owner}} à {{at}}', beat: 'Elle l’a emporté sur {{count}} autres tâches prêtes.',
    rankU: 'Rang (urgence)', chainInertia: 'Inertie de chaîne', agingBonus: 'Bonus d’attente', couplingPenalty: 'Pénalité de couplage',
  },
  trace: { title: 'Trace', show: 'Afficher la trace', hide: 'Masquer la trace' },
  settings: {
    title: 'Réglages : {{name}}', tiers: 'Niveaux de modèle', checks: 'Vérifications', hooks: 'Hooks', limits: 'Limites', repoConfig: 'Le démon enregistre ces réglages ; le .maestro/config.json du dépôt, s’il existe, définit aussi vérifications, limites et niveaux de modèle.', provider: 'Fournisseur de l’agent', notSet: 'Non défini (valeurs par défaut).',
    raw: 'Configuration (JSON)', save: 'Enregistrer', saved: 'Enregistré.', badJson: 'JSON invalide : {{message}}', notObject: 'La configuration doit être un objet JSON.',
  },
  metrics: { title: 'Mesures', byStatus: 'Tâches par statut', throughput: 'Débit (tâches terminées par heure)', durations: 'Durée des exécutions (p50 / p95)', cost: 'Coût par projet', noData: 'Pas encore de données.', runs: '{{count}} exécutions', tokens: '{{input}} entrée / {{output}} sortie' },
  knowledge: {
    title: 'Connaissances', tab: { search: 'Recherche', review: 'File de revue', audit: 'Audit' }, query: 'Rechercher dans les connaissances', search: 'Rechercher', facets: 'Facettes', type: 'Type', category: 'Catégorie', any: 'Toutes',
    counts: '{{count}} résultats ({{wiki}} wiki, {{code}} code)', chain: 'Évolution', unavailable: 'La recherche de connaissances n’est pas disponible sur ce démon.', queueEmpty: 'Rien n’attend de revue.',
    matches: 'Correspondances', evidence: 'Preuves', accept: 'Accepter', dismiss: 'Écarter', promote: 'Promouvoir', auditClean: 'L’audit n’a rien trouvé.', severity: 'Gravité', where: 'Où', message: 'Constat',
  },
  observer: {
    title: 'Observateur', sessions: 'Sessions', noSessions: 'Aucune session observée pour l’instant.', unavailable: 'L’observateur n’est pas disponible sur ce démon.', explorations: '{{count}} explorations', last: 'dernière',
    unreadable: 'Impossible d’afficher cette session : {{reason}}', flow: 'Graphe de flux', tokens: 'Jetons : {{input}} entrée / {{output}} sortie', knowledge: 'Connaissances', summary: 'Résumé',
    notSearched: 'Pas encore cherché.', noKnowledge: 'Aucune connaissance antérieure.', noSummary: 'Pas encore de résumé.', tools: '{{count}} outils', errors: '{{count}} erreurs', wiki: 'wiki : {{status}}',
    status: { running: 'en cours', complete: 'terminée', interrupted: 'interrompue' },
  },
};
