// Core group (`v1`) kinds orch serves: Namespace, Secret, ServiceAccount, ConfigMap, Event, Pod, PodTemplate
// and ReplicationController, with the pod spec they share with the apps group.
// Mirrors k8s.io/api/core/v1/types.go; defaults from pkg/apis/core/v1/defaults.go.
//
// Conventions used in every kind module:
// - a field without `omitempty` and without `+optional` is required; everything else is `opt(...)`;
// - a non-pointer struct field is always present in Go, so it defaults to `{}` when all its fields are
//   optional; a non-omitempty scalar in a status struct defaults to its Go zero value;
// - a non-omitempty pointer, slice or map (Go sends `null` for nil) is `opt(v.nullable(...))`;
// - enum-typed strings stay `str()`: an unsupported value is a validation error, not a decode error.
import * as v from "valibot";
import { LabelSelector, LocalObjectReference, ObjectMeta, ObjectReference, objectOf } from "../meta.js";
import {
  atomicList,
  bool,
  bytes,
  int32,
  int64,
  intOrString,
  mapList,
  mapOf,
  microTime,
  opt,
  quantity,
  str,
  stringMap,
  time,
} from "../schema.js";
import {
  ConditionFields,
  atomicListMergedOnPatch,
  mapListReplacedOnPatch,
  mapListRetainKeys,
  nullableTime,
  setListReplacedOnPatch,
} from "./fields.js";
import { listOf } from "./meta-list.js";

/** Default file mode of secret, configMap, downwardAPI and projected volumes (0644). */
const defaultVolumeMode = 0o644;

export const ResourceList = mapOf(quantity());
export type ResourceList = v.InferOutput<typeof ResourceList>;

// ---------------------------------------------------------------------------------------------
// Selectors and references used by volumes and env
// ---------------------------------------------------------------------------------------------

export const KeyToPath = v.object({
  key: str(),
  path: str(),
  mode: opt(int32()),
  user: opt(int64()),
});

export const ObjectFieldSelector = v.object({
  apiVersion: opt(str(), "v1"),
  fieldPath: str(),
});

export const ResourceFieldSelector = v.object({
  containerName: opt(str()),
  resource: str(),
  // A non-pointer Quantity: Go always writes it, "0" when unset.
  divisor: opt(quantity(), "0"),
});

export const ConfigMapKeySelector = v.object({
  ...LocalObjectReference.entries,
  key: str(),
  optional: opt(bool()),
});

export const SecretKeySelector = v.object({
  ...LocalObjectReference.entries,
  key: str(),
  optional: opt(bool()),
});

export const FileKeySelector = v.object({
  volumeName: str(),
  path: str(),
  key: str(),
  optional: opt(bool(), false),
});

export const TypedLocalObjectReference = v.object({
  apiGroup: opt(v.nullable(str())),
  kind: str(),
  name: str(),
});

export const TypedObjectReference = v.object({
  apiGroup: opt(v.nullable(str())),
  kind: str(),
  name: str(),
  namespace: opt(str()),
});

// ---------------------------------------------------------------------------------------------
// Volumes
// ---------------------------------------------------------------------------------------------

export const HostPathVolumeSource = v.object({
  path: str(),
  type: opt(str(), ""),
});

export const EmptyDirVolumeSource = v.object({
  medium: opt(str()),
  sizeLimit: opt(quantity()),
  mode: opt(int32()),
});

export const SecretVolumeSource = v.object({
  secretName: opt(str()),
  items: opt(atomicList(KeyToPath)),
  defaultMode: opt(int32(), defaultVolumeMode),
  optional: opt(bool()),
  defaultUser: opt(int64()),
});

export const ConfigMapVolumeSource = v.object({
  ...LocalObjectReference.entries,
  items: opt(atomicList(KeyToPath)),
  defaultMode: opt(int32(), defaultVolumeMode),
  optional: opt(bool()),
  defaultUser: opt(int64()),
});

export const PersistentVolumeClaimVolumeSource = v.object({
  claimName: str(),
  readOnly: opt(bool()),
});

export const DownwardAPIVolumeFile = v.object({
  path: str(),
  fieldRef: opt(ObjectFieldSelector),
  resourceFieldRef: opt(ResourceFieldSelector),
  mode: opt(int32()),
  user: opt(int64()),
});

export const DownwardAPIVolumeSource = v.object({
  items: opt(atomicList(DownwardAPIVolumeFile)),
  defaultMode: opt(int32(), defaultVolumeMode),
  defaultUser: opt(int64()),
});

export const SecretProjection = v.object({
  ...LocalObjectReference.entries,
  items: opt(atomicList(KeyToPath)),
  optional: opt(bool()),
});

export const ConfigMapProjection = v.object({
  ...LocalObjectReference.entries,
  items: opt(atomicList(KeyToPath)),
  optional: opt(bool()),
});

export const DownwardAPIProjection = v.object({
  items: opt(atomicList(DownwardAPIVolumeFile)),
});

export const ServiceAccountTokenProjection = v.object({
  audience: opt(str()),
  expirationSeconds: opt(int64(), 3600),
  path: str(),
  user: opt(int64()),
});

export const ClusterTrustBundleProjection = v.object({
  name: opt(str()),
  signerName: opt(str()),
  labelSelector: opt(LabelSelector),
  optional: opt(bool()),
  path: str(),
  user: opt(int64()),
});

export const PodCertificateProjection = v.object({
  signerName: str(),
  keyType: str(),
  maxExpirationSeconds: opt(int32()),
  credentialBundlePath: opt(str()),
  keyPath: opt(str()),
  certificateChainPath: opt(str()),
  userAnnotations: opt(stringMap()),
  user: opt(int64()),
});

export const VolumeProjection = v.object({
  secret: opt(SecretProjection),
  downwardAPI: opt(DownwardAPIProjection),
  configMap: opt(ConfigMapProjection),
  serviceAccountToken: opt(ServiceAccountTokenProjection),
  clusterTrustBundle: opt(ClusterTrustBundleProjection),
  podCertificate: opt(PodCertificateProjection),
});

export const ProjectedVolumeSource = v.object({
  sources: opt(v.nullable(atomicList(VolumeProjection))),
  defaultMode: opt(int32(), defaultVolumeMode),
  defaultUser: opt(int64()),
});

export const CSIVolumeSource = v.object({
  driver: str(),
  readOnly: opt(bool()),
  fsType: opt(str()),
  volumeAttributes: opt(stringMap()),
  nodePublishSecretRef: opt(LocalObjectReference),
});

export const VolumeResourceRequirements = v.object({
  limits: opt(ResourceList),
  requests: opt(ResourceList),
});

export const PersistentVolumeClaimSpec = v.object({
  accessModes: opt(atomicList(str())),
  selector: opt(LabelSelector),
  resources: opt(VolumeResourceRequirements, {}),
  volumeName: opt(str()),
  storageClassName: opt(str()),
  volumeMode: opt(str(), "Filesystem"),
  dataSource: opt(TypedLocalObjectReference),
  dataSourceRef: opt(TypedObjectReference),
  volumeAttributesClassName: opt(str()),
});

export const PersistentVolumeClaimTemplate = v.object({
  metadata: opt(ObjectMeta, {}),
  spec: PersistentVolumeClaimSpec,
});

export const EphemeralVolumeSource = v.object({
  volumeClaimTemplate: opt(PersistentVolumeClaimTemplate),
});

export const ImageVolumeSource = v.object({
  reference: opt(str()),
  // Defaulted from the reference's tag by defaultVolume.
  pullPolicy: opt(str()),
});

export const NFSVolumeSource = v.object({
  server: str(),
  path: str(),
  readOnly: opt(bool()),
});

// Older in-tree volume sources: deprecated or removed from kubelet, kept for decoding fidelity.

export const GCEPersistentDiskVolumeSource = v.object({
  pdName: str(),
  fsType: opt(str()),
  partition: opt(int32()),
  readOnly: opt(bool()),
});

export const AWSElasticBlockStoreVolumeSource = v.object({
  volumeID: str(),
  fsType: opt(str()),
  partition: opt(int32()),
  readOnly: opt(bool()),
});

export const GitRepoVolumeSource = v.object({
  repository: str(),
  revision: opt(str()),
  directory: opt(str()),
});

export const ISCSIVolumeSource = v.object({
  targetPortal: str(),
  iqn: str(),
  lun: int32(),
  iscsiInterface: opt(str(), "default"),
  fsType: opt(str()),
  readOnly: opt(bool()),
  portals: opt(atomicList(str())),
  chapAuthDiscovery: opt(bool()),
  chapAuthSession: opt(bool()),
  secretRef: opt(LocalObjectReference),
  initiatorName: opt(str()),
});

export const GlusterfsVolumeSource = v.object({
  endpoints: str(),
  path: str(),
  readOnly: opt(bool()),
});

export const RBDVolumeSource = v.object({
  monitors: atomicList(str()),
  image: str(),
  fsType: opt(str()),
  pool: opt(str(), "rbd"),
  user: opt(str(), "admin"),
  keyring: opt(str(), "/etc/ceph/keyring"),
  secretRef: opt(LocalObjectReference),
  readOnly: opt(bool()),
});

export const FlexVolumeSource = v.object({
  driver: str(),
  fsType: opt(str()),
  secretRef: opt(LocalObjectReference),
  readOnly: opt(bool()),
  options: opt(stringMap()),
});

export const CinderVolumeSource = v.object({
  volumeID: str(),
  fsType: opt(str()),
  readOnly: opt(bool()),
  secretRef: opt(LocalObjectReference),
});

export const CephFSVolumeSource = v.object({
  monitors: atomicList(str()),
  path: opt(str()),
  user: opt(str()),
  secretFile: opt(str()),
  secretRef: opt(LocalObjectReference),
  readOnly: opt(bool()),
});

export const FlockerVolumeSource = v.object({
  datasetName: opt(str()),
  datasetUUID: opt(str()),
});

export const FCVolumeSource = v.object({
  targetWWNs: opt(atomicList(str())),
  lun: opt(int32()),
  fsType: opt(str()),
  readOnly: opt(bool()),
  wwids: opt(atomicList(str())),
});

export const AzureFileVolumeSource = v.object({
  secretName: str(),
  shareName: str(),
  readOnly: opt(bool()),
});

export const VsphereVirtualDiskVolumeSource = v.object({
  volumePath: str(),
  fsType: opt(str()),
  storagePolicyName: opt(str()),
  storagePolicyID: opt(str()),
});

export const QuobyteVolumeSource = v.object({
  registry: str(),
  volume: str(),
  readOnly: opt(bool()),
  user: opt(str()),
  group: opt(str()),
  tenant: opt(str()),
});

export const AzureDiskVolumeSource = v.object({
  diskName: str(),
  diskURI: str(),
  cachingMode: opt(str(), "ReadWrite"),
  fsType: opt(str(), "ext4"),
  readOnly: opt(bool(), false),
  kind: opt(str(), "Shared"),
});

export const PhotonPersistentDiskVolumeSource = v.object({
  pdID: str(),
  fsType: opt(str()),
});

export const PortworxVolumeSource = v.object({
  volumeID: str(),
  fsType: opt(str()),
  readOnly: opt(bool()),
});

export const ScaleIOVolumeSource = v.object({
  gateway: str(),
  system: str(),
  secretRef: LocalObjectReference,
  sslEnabled: opt(bool()),
  protectionDomain: opt(str()),
  storagePool: opt(str()),
  storageMode: opt(str(), "ThinProvisioned"),
  volumeName: opt(str()),
  fsType: opt(str(), "xfs"),
  readOnly: opt(bool()),
});

export const StorageOSVolumeSource = v.object({
  volumeName: opt(str()),
  volumeNamespace: opt(str()),
  fsType: opt(str()),
  readOnly: opt(bool()),
  secretRef: opt(LocalObjectReference),
});

/** The sources a volume can be backed by; exactly one should be set (validation's job). */
export const VolumeSource = v.object({
  hostPath: opt(HostPathVolumeSource),
  emptyDir: opt(EmptyDirVolumeSource),
  gcePersistentDisk: opt(GCEPersistentDiskVolumeSource),
  awsElasticBlockStore: opt(AWSElasticBlockStoreVolumeSource),
  gitRepo: opt(GitRepoVolumeSource),
  secret: opt(SecretVolumeSource),
  nfs: opt(NFSVolumeSource),
  iscsi: opt(ISCSIVolumeSource),
  glusterfs: opt(GlusterfsVolumeSource),
  persistentVolumeClaim: opt(PersistentVolumeClaimVolumeSource),
  rbd: opt(RBDVolumeSource),
  flexVolume: opt(FlexVolumeSource),
  cinder: opt(CinderVolumeSource),
  cephfs: opt(CephFSVolumeSource),
  flocker: opt(FlockerVolumeSource),
  downwardAPI: opt(DownwardAPIVolumeSource),
  fc: opt(FCVolumeSource),
  azureFile: opt(AzureFileVolumeSource),
  configMap: opt(ConfigMapVolumeSource),
  vsphereVolume: opt(VsphereVirtualDiskVolumeSource),
  quobyte: opt(QuobyteVolumeSource),
  azureDisk: opt(AzureDiskVolumeSource),
  photonPersistentDisk: opt(PhotonPersistentDiskVolumeSource),
  projected: opt(ProjectedVolumeSource),
  portworxVolume: opt(PortworxVolumeSource),
  scaleIO: opt(ScaleIOVolumeSource),
  storageos: opt(StorageOSVolumeSource),
  csi: opt(CSIVolumeSource),
  ephemeral: opt(EphemeralVolumeSource),
  image: opt(ImageVolumeSource),
});

export const Volume = v.object({
  name: str(),
  ...VolumeSource.entries,
});
export type Volume = v.InferOutput<typeof Volume>;

// ---------------------------------------------------------------------------------------------
// Containers
// ---------------------------------------------------------------------------------------------

export const ContainerPort = v.object({
  name: opt(str()),
  hostPort: opt(int32()),
  containerPort: int32(),
  protocol: opt(str(), "TCP"),
  hostIP: opt(str()),
});

export const EnvVarSource = v.object({
  fieldRef: opt(ObjectFieldSelector),
  resourceFieldRef: opt(ResourceFieldSelector),
  configMapKeyRef: opt(ConfigMapKeySelector),
  secretKeyRef: opt(SecretKeySelector),
  fileKeyRef: opt(FileKeySelector),
});

export const EnvVar = v.object({
  name: str(),
  value: opt(str()),
  valueFrom: opt(EnvVarSource),
});

export const ConfigMapEnvSource = v.object({
  ...LocalObjectReference.entries,
  optional: opt(bool()),
});

export const SecretEnvSource = v.object({
  ...LocalObjectReference.entries,
  optional: opt(bool()),
});

export const EnvFromSource = v.object({
  prefix: opt(str()),
  configMapRef: opt(ConfigMapEnvSource),
  secretRef: opt(SecretEnvSource),
});

export const ResourceClaim = v.object({
  name: str(),
  request: opt(str()),
});

export const ResourceRequirements = v.object({
  limits: opt(ResourceList),
  requests: opt(ResourceList),
  claims: opt(mapListReplacedOnPatch(ResourceClaim, ["name"])),
});
export type ResourceRequirements = v.InferOutput<typeof ResourceRequirements>;

export const ContainerResizePolicy = v.object({
  resourceName: str(),
  restartPolicy: str(),
});

export const ContainerRestartRuleOnExitCodes = v.object({
  operator: str(),
  values: opt(setListReplacedOnPatch(int32())),
});

export const ContainerRestartRule = v.object({
  action: str(),
  exitCodes: opt(ContainerRestartRuleOnExitCodes),
});

export const VolumeMount = v.object({
  name: str(),
  readOnly: opt(bool()),
  recursiveReadOnly: opt(str()),
  mountPath: str(),
  subPath: opt(str()),
  mountPropagation: opt(str()),
  subPathExpr: opt(str()),
  bindMountOptions: opt(setListReplacedOnPatch(str())),
});

export const VolumeDevice = v.object({
  name: str(),
  devicePath: str(),
});

export const HTTPHeader = v.object({
  name: str(),
  value: str(),
});

export const HTTPGetAction = v.object({
  path: opt(str(), "/"),
  port: intOrString(),
  host: opt(str()),
  scheme: opt(str(), "HTTP"),
  httpHeaders: opt(atomicList(HTTPHeader)),
  protocol: opt(str()),
});

export const TCPSocketAction = v.object({
  port: intOrString(),
  host: opt(str()),
});

export const GRPCAction = v.object({
  port: int32(),
  // `*string` without omitempty and `+default=""`: Go clients send null, which defaultContainer fills.
  service: opt(v.nullable(str()), ""),
  mode: opt(str()),
});

export const ExecAction = v.object({
  command: opt(atomicList(str())),
});

export const SleepAction = v.object({
  seconds: int64(),
});

export const ProbeHandler = v.object({
  exec: opt(ExecAction),
  httpGet: opt(HTTPGetAction),
  tcpSocket: opt(TCPSocketAction),
  grpc: opt(GRPCAction),
});

export const Probe = v.object({
  ...ProbeHandler.entries,
  initialDelaySeconds: opt(int32()),
  timeoutSeconds: opt(int32(), 1),
  periodSeconds: opt(int32(), 10),
  successThreshold: opt(int32(), 1),
  failureThreshold: opt(int32(), 3),
  terminationGracePeriodSeconds: opt(int64()),
});
export type Probe = v.InferOutput<typeof Probe>;

export const LifecycleHandler = v.object({
  exec: opt(ExecAction),
  httpGet: opt(HTTPGetAction),
  tcpSocket: opt(TCPSocketAction),
  sleep: opt(SleepAction),
});

export const Lifecycle = v.object({
  postStart: opt(LifecycleHandler),
  preStop: opt(LifecycleHandler),
  stopSignal: opt(str()),
});

export const Capabilities = v.object({
  add: opt(atomicList(str())),
  drop: opt(atomicList(str())),
});

export const SELinuxOptions = v.object({
  user: opt(str()),
  role: opt(str()),
  type: opt(str()),
  level: opt(str()),
});

export const WindowsSecurityContextOptions = v.object({
  gmsaCredentialSpecName: opt(str()),
  gmsaCredentialSpec: opt(str()),
  runAsUserName: opt(str()),
  hostProcess: opt(bool()),
});

export const SeccompProfile = v.object({
  type: str(),
  localhostProfile: opt(str()),
});

export const AppArmorProfile = v.object({
  type: str(),
  localhostProfile: opt(str()),
});

export const SecurityContext = v.object({
  capabilities: opt(Capabilities),
  privileged: opt(bool()),
  seLinuxOptions: opt(SELinuxOptions),
  windowsOptions: opt(WindowsSecurityContextOptions),
  runAsUser: opt(int64()),
  runAsGroup: opt(int64()),
  runAsNonRoot: opt(bool()),
  readOnlyRootFilesystem: opt(bool()),
  allowPrivilegeEscalation: opt(bool()),
  procMount: opt(str()),
  seccompProfile: opt(SeccompProfile),
  appArmorProfile: opt(AppArmorProfile),
});

const containerEntries = {
  name: str(),
  image: opt(str()),
  command: opt(atomicList(str())),
  args: opt(atomicList(str())),
  workingDir: opt(str()),
  ports: opt(mapList(ContainerPort, ["containerPort", "protocol"])),
  envFrom: opt(atomicList(EnvFromSource)),
  env: opt(mapList(EnvVar, ["name"])),
  resources: opt(ResourceRequirements, {}),
  resizePolicy: opt(atomicList(ContainerResizePolicy)),
  restartPolicy: opt(str()),
  restartPolicyRules: opt(atomicList(ContainerRestartRule)),
  volumeMounts: opt(mapList(VolumeMount, ["mountPath"])),
  volumeDevices: opt(mapList(VolumeDevice, ["devicePath"])),
  livenessProbe: opt(Probe),
  readinessProbe: opt(Probe),
  startupProbe: opt(Probe),
  lifecycle: opt(Lifecycle),
  terminationMessagePath: opt(str(), "/dev/termination-log"),
  terminationMessagePolicy: opt(str(), "File"),
  // Defaulted from the image tag by defaultContainer.
  imagePullPolicy: opt(str()),
  securityContext: opt(SecurityContext),
  stdin: opt(bool()),
  stdinOnce: opt(bool()),
  tty: opt(bool()),
};

export const Container = v.object(containerEntries);
export type Container = v.InferOutput<typeof Container>;

export const EphemeralContainer = v.object({
  ...containerEntries,
  targetContainerName: opt(str()),
});
export type EphemeralContainer = v.InferOutput<typeof EphemeralContainer>;

// ---------------------------------------------------------------------------------------------
// Scheduling: affinity, tolerations, topology spread
// ---------------------------------------------------------------------------------------------

export const NodeSelectorRequirement = v.object({
  key: str(),
  operator: str(),
  values: opt(atomicList(str())),
});

export const NodeSelectorTerm = v.object({
  matchExpressions: opt(atomicList(NodeSelectorRequirement)),
  matchFields: opt(atomicList(NodeSelectorRequirement)),
});

export const NodeSelector = v.object({
  nodeSelectorTerms: atomicList(NodeSelectorTerm),
});

export const PreferredSchedulingTerm = v.object({
  weight: int32(),
  preference: NodeSelectorTerm,
});

export const NodeAffinity = v.object({
  requiredDuringSchedulingIgnoredDuringExecution: opt(NodeSelector),
  preferredDuringSchedulingIgnoredDuringExecution: opt(atomicList(PreferredSchedulingTerm)),
});

export const PodAffinityTerm = v.object({
  labelSelector: opt(LabelSelector),
  namespaces: opt(atomicList(str())),
  topologyKey: str(),
  namespaceSelector: opt(LabelSelector),
  matchLabelKeys: opt(atomicList(str())),
  mismatchLabelKeys: opt(atomicList(str())),
});

export const WeightedPodAffinityTerm = v.object({
  weight: int32(),
  podAffinityTerm: PodAffinityTerm,
});

export const PodAffinity = v.object({
  requiredDuringSchedulingIgnoredDuringExecution: opt(atomicList(PodAffinityTerm)),
  preferredDuringSchedulingIgnoredDuringExecution: opt(atomicList(WeightedPodAffinityTerm)),
});

export const PodAntiAffinity = v.object({
  requiredDuringSchedulingIgnoredDuringExecution: opt(atomicList(PodAffinityTerm)),
  preferredDuringSchedulingIgnoredDuringExecution: opt(atomicList(WeightedPodAffinityTerm)),
});

export const Affinity = v.object({
  nodeAffinity: opt(NodeAffinity),
  podAffinity: opt(PodAffinity),
  podAntiAffinity: opt(PodAntiAffinity),
});
export type Affinity = v.InferOutput<typeof Affinity>;

export const Toleration = v.object({
  key: opt(str()),
  operator: opt(str()),
  value: opt(str()),
  effect: opt(str()),
  tolerationSeconds: opt(int64()),
});
export type Toleration = v.InferOutput<typeof Toleration>;

export const TopologySpreadConstraint = v.object({
  maxSkew: int32(),
  topologyKey: str(),
  whenUnsatisfiable: str(),
  labelSelector: opt(LabelSelector),
  minDomains: opt(int32()),
  nodeAffinityPolicy: opt(str()),
  nodeTaintsPolicy: opt(str()),
  matchLabelKeys: opt(atomicList(str())),
});
export type TopologySpreadConstraint = v.InferOutput<typeof TopologySpreadConstraint>;

// ---------------------------------------------------------------------------------------------
// Pod spec
// ---------------------------------------------------------------------------------------------

export const Sysctl = v.object({
  name: str(),
  value: str(),
});

export const PodSecurityContext = v.object({
  seLinuxOptions: opt(SELinuxOptions),
  windowsOptions: opt(WindowsSecurityContextOptions),
  runAsUser: opt(int64()),
  runAsGroup: opt(int64()),
  runAsNonRoot: opt(bool()),
  supplementalGroups: opt(atomicList(int64())),
  supplementalGroupsPolicy: opt(str()),
  fsGroup: opt(int64()),
  sysctls: opt(atomicList(Sysctl)),
  fsGroupChangePolicy: opt(str()),
  seccompProfile: opt(SeccompProfile),
  appArmorProfile: opt(AppArmorProfile),
  seLinuxChangePolicy: opt(str()),
});
export type PodSecurityContext = v.InferOutput<typeof PodSecurityContext>;

export const HostAlias = v.object({
  ip: str(),
  hostnames: opt(atomicList(str())),
});

export const PodDNSConfigOption = v.object({
  name: opt(str()),
  value: opt(str()),
});

export const PodDNSConfig = v.object({
  nameservers: opt(atomicList(str())),
  searches: opt(atomicList(str())),
  options: opt(atomicList(PodDNSConfigOption)),
});
export type PodDNSConfig = v.InferOutput<typeof PodDNSConfig>;

export const PodReadinessGate = v.object({
  conditionType: str(),
});

export const PodOS = v.object({
  name: str(),
});

export const PodSchedulingGate = v.object({
  name: str(),
});

export const PodResourceClaim = v.object({
  name: str(),
  resourceClaimName: opt(str()),
  resourceClaimTemplateName: opt(str()),
});

export const PodSchedulingGroup = v.object({
  podGroupName: opt(str()),
});

export const EvictionResponder = v.object({
  name: str(),
  priority: int32(),
});

export const PodSpec = v.object({
  volumes: opt(mapListRetainKeys(Volume, ["name"])),
  initContainers: opt(mapList(Container, ["name"])),
  containers: mapList(Container, ["name"]),
  ephemeralContainers: opt(mapList(EphemeralContainer, ["name"])),
  restartPolicy: opt(str(), "Always"),
  terminationGracePeriodSeconds: opt(int64(), 30),
  activeDeadlineSeconds: opt(int64()),
  dnsPolicy: opt(str(), "ClusterFirst"),
  nodeSelector: opt(stringMap()),
  serviceAccountName: opt(str()),
  serviceAccount: opt(str()),
  automountServiceAccountToken: opt(bool()),
  nodeName: opt(str()),
  hostNetwork: opt(bool()),
  hostPID: opt(bool()),
  hostIPC: opt(bool()),
  shareProcessNamespace: opt(bool()),
  securityContext: opt(PodSecurityContext, {}),
  imagePullSecrets: opt(mapList(LocalObjectReference, ["name"])),
  hostname: opt(str()),
  subdomain: opt(str()),
  affinity: opt(Affinity),
  schedulerName: opt(str(), "default-scheduler"),
  tolerations: opt(atomicList(Toleration)),
  hostAliases: opt(mapList(HostAlias, ["ip"])),
  priorityClassName: opt(str()),
  priority: opt(int32()),
  dnsConfig: opt(PodDNSConfig),
  readinessGates: opt(atomicList(PodReadinessGate)),
  runtimeClassName: opt(str()),
  // Defaulted to true for Pod objects only (defaultPod), not in templates.
  enableServiceLinks: opt(bool()),
  preemptionPolicy: opt(str()),
  overhead: opt(ResourceList),
  topologySpreadConstraints: opt(mapList(TopologySpreadConstraint, ["topologyKey", "whenUnsatisfiable"])),
  setHostnameAsFQDN: opt(bool()),
  os: opt(PodOS),
  hostUsers: opt(bool()),
  schedulingGates: opt(mapList(PodSchedulingGate, ["name"])),
  resourceClaims: opt(mapListRetainKeys(PodResourceClaim, ["name"])),
  resources: opt(ResourceRequirements),
  hostnameOverride: opt(str()),
  schedulingGroup: opt(PodSchedulingGroup),
  evictionResponders: opt(mapList(EvictionResponder, ["name"])),
});
export type PodSpec = v.InferOutput<typeof PodSpec>;

export const PodTemplateSpec = v.object({
  metadata: opt(ObjectMeta, {}),
  spec: opt(PodSpec),
});
export type PodTemplateSpec = v.InferOutput<typeof PodTemplateSpec>;

// ---------------------------------------------------------------------------------------------
// Pod status
// ---------------------------------------------------------------------------------------------

export const PodCondition = v.pick(ConditionFields, [
  "type",
  "observedGeneration",
  "status",
  "lastProbeTime",
  "lastTransitionTime",
  "reason",
  "message",
]);

export const ContainerStateWaiting = v.object({
  reason: opt(str()),
  message: opt(str()),
});

export const ContainerStateRunning = v.object({
  startedAt: nullableTime(),
});

export const ContainerStateTerminated = v.object({
  exitCode: opt(int32(), 0),
  signal: opt(int32()),
  reason: opt(str()),
  message: opt(str()),
  startedAt: nullableTime(),
  finishedAt: nullableTime(),
  containerID: opt(str()),
});

export const ContainerState = v.object({
  waiting: opt(ContainerStateWaiting),
  running: opt(ContainerStateRunning),
  terminated: opt(ContainerStateTerminated),
});

export const ImageVolumeStatus = v.object({
  imageRef: str(),
});

export const VolumeStatus = v.object({
  image: opt(ImageVolumeStatus),
});

export const VolumeMountStatus = v.object({
  name: str(),
  mountPath: str(),
  readOnly: opt(bool()),
  recursiveReadOnly: opt(str()),
  volumeStatus: opt(VolumeStatus),
});

export const LinuxContainerUser = v.object({
  uid: int64(),
  gid: int64(),
  supplementalGroups: opt(atomicList(int64())),
});

export const ContainerUser = v.object({
  linux: opt(LinuxContainerUser),
});

export const ResourceHealth = v.object({
  resourceID: str(),
  health: opt(str()),
  message: opt(str()),
});

export const ResourceStatus = v.object({
  name: str(),
  resources: opt(mapListReplacedOnPatch(ResourceHealth, ["resourceID"])),
});

export const ContainerStatus = v.object({
  name: str(),
  state: opt(ContainerState, {}),
  lastState: opt(ContainerState, {}),
  ready: opt(bool(), false),
  restartCount: opt(int32(), 0),
  image: opt(str(), ""),
  imageID: opt(str(), ""),
  containerID: opt(str()),
  started: opt(bool()),
  allocatedResources: opt(ResourceList),
  resources: opt(ResourceRequirements),
  volumeMounts: opt(mapList(VolumeMountStatus, ["mountPath"])),
  user: opt(ContainerUser),
  allocatedResourcesStatus: opt(mapList(ResourceStatus, ["name"])),
  stopSignal: opt(str()),
});
export type ContainerStatus = v.InferOutput<typeof ContainerStatus>;

export const HostIP = v.object({ ip: str() });
export const PodIP = v.object({ ip: str() });

export const PodResourceClaimStatus = v.object({
  name: str(),
  resourceClaimName: opt(str()),
});

export const ContainerExtendedResourceRequest = v.object({
  containerName: str(),
  resourceName: str(),
  requestName: str(),
});

export const PodExtendedResourceClaimStatus = v.object({
  requestMappings: atomicList(ContainerExtendedResourceRequest),
  resourceClaimName: str(),
});

export const NodeAllocatableMappedResources = v.object({
  name: str(),
  quantity: quantity(),
});

export const NodeAllocatableOverheadResources = v.object({
  name: str(),
  perPod: opt(quantity()),
  perContainer: opt(quantity()),
});

export const NodeAllocatableResourceClaimStatus = v.object({
  resourceClaimName: str(),
  containers: opt(setListReplacedOnPatch(str())),
  mapping: opt(mapList(NodeAllocatableMappedResources, ["name"])),
  overhead: opt(mapList(NodeAllocatableOverheadResources, ["name"])),
});

export const VolumeHealthCondition = v.object({
  status: str(),
  reason: str(),
  message: opt(str()),
});

export const PodVolumeHealth = v.object({
  name: str(),
  healthConditions: opt(mapList(VolumeHealthCondition, ["status", "reason"])),
  lastTransitionTime: nullableTime(),
});

export const PodStatus = v.object({
  observedGeneration: opt(int64()),
  phase: opt(str()),
  conditions: opt(mapList(PodCondition, ["type"])),
  message: opt(str()),
  reason: opt(str()),
  nominatedNodeName: opt(str()),
  hostIP: opt(str()),
  hostIPs: opt(atomicListMergedOnPatch(HostIP, "ip")),
  podIP: opt(str()),
  podIPs: opt(mapList(PodIP, ["ip"])),
  startTime: opt(time()),
  initContainerStatuses: opt(atomicList(ContainerStatus)),
  containerStatuses: opt(atomicList(ContainerStatus)),
  qosClass: opt(str()),
  ephemeralContainerStatuses: opt(atomicList(ContainerStatus)),
  resize: opt(str()),
  resourceClaimStatuses: opt(mapListRetainKeys(PodResourceClaimStatus, ["name"])),
  extendedResourceClaimStatus: opt(PodExtendedResourceClaimStatus),
  allocatedResources: opt(ResourceList),
  resources: opt(ResourceRequirements),
  nodeAllocatableResourceClaimStatuses: opt(mapList(NodeAllocatableResourceClaimStatus, ["resourceClaimName"])),
  volumeHealth: opt(mapListReplacedOnPatch(PodVolumeHealth, ["name"])),
});
export type PodStatus = v.InferOutput<typeof PodStatus>;

// ---------------------------------------------------------------------------------------------
// Kinds
// ---------------------------------------------------------------------------------------------

export const Pod = objectOf({
  spec: opt(PodSpec),
  status: opt(PodStatus, {}),
});
export type Pod = v.InferOutput<typeof Pod>;
export const PodList = listOf(Pod);

/** The body of `pods/{name}/binding` (and the legacy `bindings` collection): the node a pod is bound to. */
export const Binding = objectOf({
  target: opt(ObjectReference, {}),
});
export type Binding = v.InferOutput<typeof Binding>;

export const PodTemplate = objectOf({
  template: opt(PodTemplateSpec, {}),
});
export type PodTemplate = v.InferOutput<typeof PodTemplate>;
export const PodTemplateList = listOf(PodTemplate);

export const ReplicationControllerSpec = v.object({
  replicas: opt(int32(), 1),
  minReadySeconds: opt(int32()),
  selector: opt(stringMap()),
  template: opt(PodTemplateSpec),
});

export const ReplicationControllerCondition = v.pick(ConditionFields, ["type", "status", "lastTransitionTime", "reason", "message"]);

export const ReplicationControllerStatus = v.object({
  replicas: opt(int32(), 0),
  fullyLabeledReplicas: opt(int32()),
  readyReplicas: opt(int32()),
  availableReplicas: opt(int32()),
  observedGeneration: opt(int64()),
  conditions: opt(mapList(ReplicationControllerCondition, ["type"])),
});

export const ReplicationController = objectOf({
  spec: opt(ReplicationControllerSpec, {}),
  status: opt(ReplicationControllerStatus, {}),
});
export type ReplicationController = v.InferOutput<typeof ReplicationController>;
export const ReplicationControllerList = listOf(ReplicationController);

export const NamespaceSpec = v.object({
  finalizers: opt(atomicList(str())),
});

export const NamespaceCondition = v.pick(ConditionFields, ["type", "status", "lastTransitionTime", "reason", "message"]);

export const NamespaceStatus = v.object({
  phase: opt(str(), "Active"),
  conditions: opt(mapList(NamespaceCondition, ["type"])),
});

export const Namespace = objectOf({
  spec: opt(NamespaceSpec, {}),
  status: opt(NamespaceStatus, {}),
});
export type Namespace = v.InferOutput<typeof Namespace>;
export const NamespaceList = listOf(Namespace);

export const Secret = objectOf({
  immutable: opt(bool()),
  data: opt(mapOf(bytes())),
  stringData: opt(stringMap()),
  type: opt(str(), "Opaque"),
});
export type Secret = v.InferOutput<typeof Secret>;
export const SecretList = listOf(Secret);

export const ServiceAccount = objectOf({
  secrets: opt(mapList(ObjectReference, ["name"])),
  imagePullSecrets: opt(atomicList(LocalObjectReference)),
  automountServiceAccountToken: opt(bool()),
});
export type ServiceAccount = v.InferOutput<typeof ServiceAccount>;
export const ServiceAccountList = listOf(ServiceAccount);

export const ConfigMap = objectOf({
  immutable: opt(bool()),
  data: opt(stringMap()),
  binaryData: opt(mapOf(bytes())),
});
export type ConfigMap = v.InferOutput<typeof ConfigMap>;
export const ConfigMapList = listOf(ConfigMap);

export const EventSource = v.object({
  component: opt(str()),
  host: opt(str()),
});

export const EventSeries = v.object({
  count: opt(int32()),
  lastObservedTime: opt(v.nullable(microTime())),
});

/** core/v1 Event: what `record.EventRecorder` writes; also the stored form of events.<domain>/v1 Events. */
export const Event = objectOf({
  involvedObject: opt(ObjectReference, {}),
  reason: opt(str()),
  message: opt(str()),
  source: opt(EventSource, {}),
  firstTimestamp: nullableTime(),
  lastTimestamp: nullableTime(),
  count: opt(int32()),
  type: opt(str()),
  eventTime: opt(v.nullable(microTime())),
  series: opt(v.nullable(EventSeries)),
  action: opt(str()),
  related: opt(v.nullable(ObjectReference)),
  // Neither field is omitempty in Go: both are always sent, "" when unset.
  reportingComponent: opt(str(), ""),
  reportingInstance: opt(str(), ""),
});
export type Event = v.InferOutput<typeof Event>;
export const EventList = listOf(Event);

// ---------------------------------------------------------------------------------------------
// Conditional defaults (run after the schema has applied the static ones). Go defaults a field when
// it holds its zero value, so an explicit "" or 0 is defaulted here too.
// ---------------------------------------------------------------------------------------------

/**
 * The tag of an image reference as Kubernetes' `parsers.ParseImageName` sees it: "latest" when the
 * reference names neither a tag nor a digest, "" when it does not parse.
 */
export function imageTag(image: string): string {
  const at = image.indexOf("@");
  const name = at >= 0 ? image.slice(0, at) : image;
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  const repository = colon > slash ? name.slice(0, colon) : name;
  const tag = colon > slash ? name.slice(colon + 1) : "";
  // Repository paths are lower case (the registry host may not be, and sits before the first "/").
  const path = repository.slice(repository.indexOf("/") + 1);
  if (repository === "" || /\s/.test(image) || path !== path.toLowerCase()) return "";
  if (tag === "" && at < 0) return "latest";
  return tag;
}

/** `Always` for `:latest` or untagged images, `IfNotPresent` otherwise. */
export const defaultPullPolicy = (image: string): string => (imageTag(image) === "latest" ? "Always" : "IfNotPresent");

function defaultProbe(probe: Probe | undefined): void {
  if (!probe) return;
  if (!probe.timeoutSeconds) probe.timeoutSeconds = 1;
  if (!probe.periodSeconds) probe.periodSeconds = 10;
  if (!probe.successThreshold) probe.successThreshold = 1;
  if (!probe.failureThreshold) probe.failureThreshold = 3;
  if (probe.httpGet) {
    if (!probe.httpGet.path) probe.httpGet.path = "/";
    if (!probe.httpGet.scheme) probe.httpGet.scheme = "HTTP";
  }
  if (probe.grpc && probe.grpc.service == null) probe.grpc.service = "";
}

/** SetDefaults_Container: image pull policy from the tag, termination message path and policy, probes. */
export function defaultContainer(container: Container | EphemeralContainer): void {
  if (!container.imagePullPolicy) container.imagePullPolicy = defaultPullPolicy(container.image ?? "");
  if (!container.terminationMessagePath) container.terminationMessagePath = "/dev/termination-log";
  if (!container.terminationMessagePolicy) container.terminationMessagePolicy = "File";
  for (const port of container.ports ?? []) if (!port.protocol) port.protocol = "TCP";
  defaultProbe(container.livenessProbe);
  defaultProbe(container.readinessProbe);
  defaultProbe(container.startupProbe);
}

/** SetDefaults_Volume: a volume without a source is an emptyDir; image volumes get a pull policy. */
export function defaultVolume(volume: Volume): void {
  const { name: _name, ...sources } = volume;
  if (Object.values(sources).every((source) => source === undefined)) volume.emptyDir = {};
  if (volume.image && !volume.image.pullPolicy) {
    volume.image.pullPolicy = defaultPullPolicy(volume.image.reference ?? "");
  }
}

/** SetDefaults_PodSpec and the defaults of everything inside it; applies to pods and templates alike. */
export function defaultPodSpec(spec: PodSpec): void {
  if (!spec.dnsPolicy) spec.dnsPolicy = "ClusterFirst";
  if (!spec.restartPolicy) spec.restartPolicy = "Always";
  if (!spec.schedulerName) spec.schedulerName = "default-scheduler";
  for (const volume of spec.volumes ?? []) defaultVolume(volume);
  for (const container of spec.initContainers ?? []) defaultContainer(container);
  for (const container of spec.containers) defaultContainer(container);
  for (const container of spec.ephemeralContainers ?? []) defaultContainer(container);
}

export function defaultPodTemplateSpec(template: PodTemplateSpec | undefined): void {
  if (template?.spec) defaultPodSpec(template.spec);
}

/**
 * SetDefaults_Pod, on top of the pod spec defaults: container requests default to their limits,
 * `enableServiceLinks` to true, and with host networking container ports to host ports.
 * (Pod-level resource defaulting behind the PodLevelResources gate is not done.)
 */
export function defaultPod(pod: Pod): void {
  const spec = pod.spec;
  if (!spec) return;
  defaultPodSpec(spec);
  const containers = [...(spec.initContainers ?? []), ...spec.containers];
  for (const { resources } of containers) {
    if (!resources.limits) continue;
    resources.requests ??= {};
    for (const [name, limit] of Object.entries(resources.limits)) {
      if (!(name in resources.requests)) resources.requests[name] = limit;
    }
  }
  spec.enableServiceLinks ??= true;
  if (spec.hostNetwork) {
    for (const container of containers) {
      for (const port of container.ports ?? []) if (!port.hostPort) port.hostPort = port.containerPort;
    }
  }
}

export function defaultPodTemplate(podTemplate: PodTemplate): void {
  defaultPodTemplateSpec(podTemplate.template);
}

/** SetDefaults_ReplicationController: selector and object labels default to the template's labels. */
export function defaultReplicationController(rc: ReplicationController): void {
  const labels = rc.spec.template?.metadata.labels;
  if (labels) {
    if (Object.keys(rc.spec.selector ?? {}).length === 0) rc.spec.selector = { ...labels };
    if (Object.keys(rc.metadata.labels ?? {}).length === 0) rc.metadata.labels = { ...labels };
  }
  defaultPodTemplateSpec(rc.spec.template);
}

/**
 * SetDefaults_Namespace: a named namespace carries the label `<domain>/metadata.name` with its name
 * (`kubernetes.io/metadata.name` in Kubernetes). Also SetDefaults_NamespaceStatus for an explicit "".
 */
export function defaultNamespace(namespace: Namespace, labelDomain = "kubernetes.io"): void {
  const name = namespace.metadata.name;
  if (name) namespace.metadata.labels = { ...namespace.metadata.labels, [`${labelDomain}/metadata.name`]: name };
  if (!namespace.status.phase) namespace.status.phase = "Active";
}

export function defaultSecret(secret: Secret): void {
  if (!secret.type) secret.type = "Opaque";
}
