// Strata does not encrypt its files. A configuration that carries an encryption key (RealmSwift
// code moved to StrataRealmCompat, whose `encryptionKey` reads an encrypted Realm file on its
// first open) asks for encryption that Strata will not give, so such a configuration opens only
// once the app has said it accepts an unencrypted file: a database that silently drops the
// encryption an app asked for would leave the app believing its data is protected.

extension Database.Configuration {
    /// Throws unless the configuration gives no encryption key or accepts an unencrypted
    /// file (`allowsUnencryptedFile`). Every open checks it, and so does StrataRealmCompat
    /// before it imports an encrypted Realm file (the import is where the data leaves the
    /// encrypted file).
    package func checkEncryption() throws(Database.Error) {
        guard realmEncryptionKey != nil, !allowsUnencryptedFile else { return }
        let file = inMemoryIdentifier.map { "the in-memory database '\($0)'" } ?? fileURL.map { "'\($0.path)'" } ?? "the database"
        throw Database.Error(.invalidInput, """
            The configuration of \(file) gives an encryptionKey, but Strata does not encrypt its files: the data would be \
            stored unencrypted. Set allowsUnencryptedFile = true on the configuration to accept that (the key is then used \
            only to read an encrypted Realm file imported on the first open), or leave encryptionKey nil and protect the \
            file another way (the platform's data protection, an encrypted volume).
            """, path: fileURL?.path)
    }
}
