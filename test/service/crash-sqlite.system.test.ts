import { crashRounds } from '../helpers/crash-rounds.ts'

// SIGKILL under load on SQLite, the embedded default (test/helpers/crash-rounds.ts).
crashRounds('sqlite')
