/**
 * Marks the objects a router creates (SMI TrafficSplit, the canary Ingress) as Sluice's, so
 * that people see who made them and a router never rewrites a same-named object it did not make.
 */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'sluice';
