// RealmSwift's `ObjectBase`: the base of every persisted object class, for generic code
// (`func f<T: ObjectBase>(_ object: T)`, `ObjectChange<ObjectBase>`).
//
// In RealmSwift it is the Objective-C class `RLMObjectBase`, which `Object`,
// `EmbeddedObject` and `AsymmetricObject` subclass. Strata's `EmbeddedObject` is a subclass of
// `Object`, so `Object` itself is that common base and the name is an alias of it.

public import Strata

/// RealmSwift's base class of `Object` and `EmbeddedObject`: in Strata, `Object` (of which
/// `EmbeddedObject` is a subclass). Generic code constrained to `ObjectBase` accepts both, and
/// `ObjectChange<ObjectBase>` is what an observation of an `ObjectBase`-typed value reports.
public typealias ObjectBase = Object
