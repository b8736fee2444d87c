/** Types of `cluster-key-slot` (the slot function ioredis itself uses; the package ships none). */
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0..16383) of `key`: CRC16 of the key or of its `{hash tag}`, mod 16384. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
