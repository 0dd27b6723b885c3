import type { Handlers } from '../openapi/handler-types.js'
import type { PlantStore } from '../store/store.js'
import { createPlant } from './create-plant.js'

export interface HandlerDeps {
  store: PlantStore
}

export function createHandlers ({ store }: HandlerDeps): Handlers {
  return {
    createPlant: createPlant(store)
  }
}
