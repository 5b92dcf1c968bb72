// RealmSwift's `Realm.Error` surface on Strata's `Database.Error` (`Realm.Error` is that type
// through the `Realm` alias): the codes are the same numbers, `catch Realm.Error.fileNotFound`
// matches by code, and `fileURL` is the file the error concerns.

public import Foundation
public import Strata

extension Database.Error {
    /// The file the error concerns, as RealmSwift's `Realm.Error.fileURL` gives it; nil when
    /// the error is not about one file.
    public var fileURL: URL? { path.map { URL(fileURLWithPath: $0) } }

    /// RealmSwift's name for the error's numeric code (`code.rawValue`), as `NSError.code`
    /// gives it.
    public var errorCode: Int { code.rawValue }
}
