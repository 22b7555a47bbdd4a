/// Who a session is: its serial number in the run, the account slot it claimed and the account.
///
/// `slot` is the account's position in the run's range (0-based, the index into `OnlineDirectory`);
/// `accountNumber` is the N of `userN`. Plain value.
struct SessionIdentity: Sendable {
    let serial: Int
    let slot: Int
    let accountNumber: Int
    let username: String
    let bareJID: String
}
