import type { Handlers } from '../openapi/routes/handler-types.ts'
import type { PlantStore } from '../store/store.ts'
import { createPlant } from './create-plant.ts'

export interface HandlerDeps {
  store: PlantStore
}

export function createHandlers ({ store }: HandlerDeps): Handlers {
  return {
    createPlant: createPlant(store)
  }
}
