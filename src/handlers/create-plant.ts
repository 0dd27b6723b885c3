import type { Handler } from '../openapi/routes/handler-types.ts'
import type { PlantStore, StoredPlant } from '../store/store.ts'

export function createPlant (store: PlantStore): Handler<'createPlant'> {
  return async ({ body }) => {
    // Only the declared fields are stored; unknown properties are accepted and dropped.
    const plant: StoredPlant = { id: BigInt(body.id), name: body.name }
    if (body.tag !== undefined) plant.tag = body.tag
    const outcome = await store.create(plant)
    if (outcome === 'conflict') {
      return { status: 409, body: { error: 409, message: `Plant ${plant.id} already exists with a different name or tag` } }
    }
    return { status: 200, body: plant }
  }
}
