// The store's contract. It knows plants, not HTTP: the handler turns outcomes into statuses.

export interface StoredPlant {
  /** int64, kept exact: always a bigint here, whatever its size. */
  id: bigint
  name: string
  tag?: string
}

/**
 * created: the plant was written and committed.
 * replayed: the identical plant was already stored; nothing was written.
 * conflict: a different plant is stored under this id; nothing was written.
 */
export type CreateOutcome = 'created' | 'replayed' | 'conflict'

/** A create's answer from a commit: its outcome, or its own error (a bad row fails alone). */
export type RowResult = CreateOutcome | { error: unknown }

export interface PlantStore {
  /** Resolves only once the outcome is durable. */
  create (plant: StoredPlant): Promise<CreateOutcome>
  /**
   * Commits plants together, each as its create would be, in order, and resolves once durable:
   * for bulk copies, which make their own batches. Rejects when the whole batch failed.
   */
  createMany (plants: StoredPlant[]): Promise<RowResult[]>
  get (id: bigint): Promise<StoredPlant | undefined>
  /** Rejects when the store cannot serve requests. */
  ping (): Promise<void>
  close (): Promise<void>
}

/** A plant as both stores keep it: int8 id, and NULL for no tag. */
export interface PlantRow { id: bigint, name: string, tag: string | null }

/** A stored row as a plant: a NULL tag is no tag. */
export function plantFromRow (row: PlantRow): StoredPlant {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag }
}

/** The outcome of a create whose id was already taken by `existing`. */
export function outcomeOver (existing: StoredPlant | undefined, plant: StoredPlant): 'replayed' | 'conflict' {
  return existing?.name === plant.name && existing.tag === plant.tag ? 'replayed' : 'conflict'
}

/** Refuses a database whose schema was migrated by a newer version of the service. */
export function checkSchemaVersion (version: number, known: number): void {
  if (version > known) throw new Error(`the database is at schema version ${version}, newer than this service knows (${known})`)
}
