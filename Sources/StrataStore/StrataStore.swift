// The object store (schema, tables, columns, queries, change sets) is built on StrataStorage
// by the objects issue. This file only anchors the module until then.
import StrataStorage
