/** The one place the rollout controller picks a traffic router by provider name. */
export { routerFor } from '../traffic/index.js';
