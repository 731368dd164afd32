// @ts-check
/**
 * views/index.js — the URL parameters every view declares, gathered for the
 * router (router.useViews), and the table tabs' allowed values. The router
 * does not import the views: they import it to build their links.
 */

import { TABLE as kernelsTable } from './kernels.js';
import { TABLE as memoryTable } from './memory.js';
import { TABLE as operatorsTable } from './operators.js';
import * as compareView from './compare.js';
import * as compareNView from './comparen.js';
import * as projectView from './project.js';
import * as runView from './run.js';
import * as runsView from './runs.js';

/** @type {import('../router.js').ViewParams} */
export const VIEW_PARAMS = Object.freeze({
    runs: runsView.params,
    compare: compareView.params,
    comparen: compareNView.params,
    project: projectView.params,
    tabParams: runView.tabParams,
});

/**
 * Run page tabs that show a server-side table, with the values their URL
 * parameters may take, as their views declare them.
 * @type {Readonly<Record<string, import('../params.js').TableSpec>>}
 */
export const TAB_TABLES = Object.freeze({
    operators: operatorsTable,
    kernels: kernelsTable,
    memory: memoryTable,
});
