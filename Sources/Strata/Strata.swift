// The public object API (Database, Object, Results, notifications) is built by the objects
// issue. This file only anchors the module until then.
import StrataStore
