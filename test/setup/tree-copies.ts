// Removes the tree copies a test made (test/scripts/helpers/tree.ts) after each test. A setup file, not a hook at the
// helper's top level: the processes project shares each worker's modules between files (vitest.config.ts), so a
// helper's top-level code runs for the first file that imports it only, while setup files run for every file.
import { afterEach } from "vitest";
import { removeTreeCopies } from "../scripts/helpers/tree";

afterEach(removeTreeCopies);
