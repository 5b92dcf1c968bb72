// RealmSwift-named aliases over Strata arrive with the objects issue.
@_exported public import Strata
