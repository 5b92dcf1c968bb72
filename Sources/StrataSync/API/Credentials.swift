/// How a user proves who they are to ``App/login(credentials:)``.
public enum Credentials: Sendable, Hashable {
    /// A new anonymous user (the server makes one per login).
    case anonymous
    /// A JSON Web Token from the app's own identity provider, signed with the key the server
    /// is configured with (HS256).
    case jwt(token: String)
}
