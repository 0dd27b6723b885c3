import { crashRounds } from '../helpers/crash-rounds.ts'

// SIGKILL under load on PostgreSQL (test/helpers/crash-rounds.ts).
crashRounds('postgres')
