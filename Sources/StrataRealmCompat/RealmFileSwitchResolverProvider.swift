// How every open form of a configuration goes through the invisible switch: Strata runs one
// process-wide resolver before each open (`DatabaseOpenResolver`), and this module's is
// `RealmFileSwitch.resolve`.
import Strata

/// Provides `RealmFileSwitch.resolve` as Strata's open resolver, so `Realm()`,
/// `Realm(configuration:)`, `Realm(configuration:queue:)`, `try await Realm(configuration:)`,
/// `try await Realm(configuration:actor:)` and `Realm.asyncOpen` all import a Realm file on
/// the first open.
///
/// Strata looks this type up by name on its first open, so the switch applies even when an
/// app's first open runs no code of this module (an async open of a configuration built with
/// Strata's own initializer); the synchronous compat opens also install it directly. Renaming
/// the type breaks that lookup (`DatabaseOpenResolver` names it).
struct RealmFileSwitchResolverProvider: DatabaseOpenResolverProviding {
    static var openResolver: DatabaseOpenResolver.Resolve {
        { configuration in try RealmFileSwitch.resolve(configuration) }
    }

    /// Installs the resolver (only the first install in a process counts; later ones are no-ops).
    static func install() {
        DatabaseOpenResolver.install(openResolver)
    }
}
