// Protobuf field tables for k8s.io/api/core/v1 at v0.36.3: field numbers from generated.proto,
// JSON names, pointers and omitempty from types.go. Syntax: ../schema.ts. Only messages the decodable kinds reach.
import type { MessageTable } from "../schema.js";

export const coreV1: MessageTable = {
  Affinity: `1:nodeAffinity:NodeAffinity 2:podAffinity:PodAffinity 3:podAntiAffinity:PodAntiAffinity`,
  AppArmorProfile: `1:type:!string 2:localhostProfile:?string`,
  AWSElasticBlockStoreVolumeSource: `1:volumeID:!string 2:fsType:string 3:partition:int32 4:readOnly:bool`,
  AzureDiskVolumeSource: `1:diskName:!string 2:diskURI:!string 3:cachingMode:?string 4:fsType:?string
    5:readOnly:?bool 6:kind:?string`,
  AzureFileVolumeSource: `1:secretName:!string 2:shareName:!string 3:readOnly:bool`,
  Capabilities: `1:add:[]string 2:drop:[]string`,
  CephFSVolumeSource: `1:monitors:[]string 2:path:string 3:user:string 4:secretFile:string
    5:secretRef:LocalObjectReference 6:readOnly:bool`,
  CinderVolumeSource: `1:volumeID:!string 2:fsType:string 3:readOnly:bool 4:secretRef:LocalObjectReference`,
  ClientIPConfig: `1:timeoutSeconds:?int32`,
  ClusterTrustBundleProjection: `1:name:?string 2:signerName:?string 3:labelSelector:LabelSelector 5:optional:?bool
    4:path:!string`,
  ConfigMap: `1:metadata:ObjectMeta 4:immutable:?bool 2:data:map:string 3:binaryData:map:bytes`,
  ConfigMapEnvSource: `1:...:LocalObjectReference 2:optional:?bool`,
  ConfigMapKeySelector: `1:...:LocalObjectReference 2:key:!string 3:optional:?bool`,
  ConfigMapProjection: `1:...:LocalObjectReference 2:items:[]KeyToPath 4:optional:?bool`,
  ConfigMapVolumeSource: `1:...:LocalObjectReference 2:items:[]KeyToPath 3:defaultMode:?int32 4:optional:?bool`,
  Container: `1:name:!string 2:image:string 3:command:[]string 4:args:[]string 5:workingDir:string
    6:ports:[]ContainerPort 19:envFrom:[]EnvFromSource 7:env:[]EnvVar 8:resources:ResourceRequirements
    23:resizePolicy:[]ContainerResizePolicy 24:restartPolicy:?string 25:restartPolicyRules:[]ContainerRestartRule
    9:volumeMounts:[]VolumeMount 21:volumeDevices:[]VolumeDevice 10:livenessProbe:Probe 11:readinessProbe:Probe
    22:startupProbe:Probe 12:lifecycle:Lifecycle 13:terminationMessagePath:string 20:terminationMessagePolicy:string
    14:imagePullPolicy:string 15:securityContext:SecurityContext 16:stdin:bool 17:stdinOnce:bool 18:tty:bool`,
  ContainerExtendedResourceRequest: `1:containerName:!string 2:resourceName:!string 3:requestName:!string`,
  ContainerPort: `1:name:string 2:hostPort:int32 3:containerPort:!int32 4:protocol:string 5:hostIP:string`,
  ContainerResizePolicy: `1:resourceName:!string 2:restartPolicy:!string`,
  ContainerRestartRule: `1:action:string 2:exitCodes:ContainerRestartRuleOnExitCodes`,
  ContainerRestartRuleOnExitCodes: `1:operator:string 2:values:[]int32`,
  ContainerState: `1:waiting:ContainerStateWaiting 2:running:ContainerStateRunning
    3:terminated:ContainerStateTerminated`,
  ContainerStateRunning: `1:startedAt:Time`,
  ContainerStateTerminated: `1:exitCode:!int32 2:signal:int32 3:reason:string 4:message:string 5:startedAt:Time
    6:finishedAt:Time 7:containerID:string`,
  ContainerStateWaiting: `1:reason:string 2:message:string`,
  ContainerStatus: `1:name:!string 2:state:ContainerState 3:lastState:ContainerState 4:ready:!bool
    5:restartCount:!int32 6:image:!string 7:imageID:!string 8:containerID:string 9:started:?bool
    10:allocatedResources:map:Quantity 11:resources:ResourceRequirements 12:volumeMounts:[]VolumeMountStatus
    13:user:ContainerUser 14:allocatedResourcesStatus:[]ResourceStatus 15:stopSignal:?string`,
  ContainerUser: `1:linux:LinuxContainerUser`,
  CSIVolumeSource: `1:driver:!string 2:readOnly:?bool 3:fsType:?string 4:volumeAttributes:map:string
    5:nodePublishSecretRef:LocalObjectReference`,
  DownwardAPIProjection: `1:items:[]DownwardAPIVolumeFile`,
  DownwardAPIVolumeFile: `1:path:!string 2:fieldRef:ObjectFieldSelector 3:resourceFieldRef:ResourceFieldSelector
    4:mode:?int32`,
  DownwardAPIVolumeSource: `1:items:[]DownwardAPIVolumeFile 2:defaultMode:?int32`,
  EmptyDirVolumeSource: `1:medium:string 2:sizeLimit:Quantity`,
  EnvFromSource: `1:prefix:string 2:configMapRef:ConfigMapEnvSource 3:secretRef:SecretEnvSource`,
  EnvVar: `1:name:!string 2:value:string 3:valueFrom:EnvVarSource`,
  EnvVarSource: `1:fieldRef:ObjectFieldSelector 2:resourceFieldRef:ResourceFieldSelector
    3:configMapKeyRef:ConfigMapKeySelector 4:secretKeyRef:SecretKeySelector 5:fileKeyRef:FileKeySelector`,
  EphemeralContainer: `1:...:EphemeralContainerCommon 2:targetContainerName:string`,
  EphemeralContainerCommon: `1:name:!string 2:image:string 3:command:[]string 4:args:[]string 5:workingDir:string
    6:ports:[]ContainerPort 19:envFrom:[]EnvFromSource 7:env:[]EnvVar 8:resources:ResourceRequirements
    23:resizePolicy:[]ContainerResizePolicy 24:restartPolicy:?string 25:restartPolicyRules:[]ContainerRestartRule
    9:volumeMounts:[]VolumeMount 21:volumeDevices:[]VolumeDevice 10:livenessProbe:Probe 11:readinessProbe:Probe
    22:startupProbe:Probe 12:lifecycle:Lifecycle 13:terminationMessagePath:string 20:terminationMessagePolicy:string
    14:imagePullPolicy:string 15:securityContext:SecurityContext 16:stdin:bool 17:stdinOnce:bool 18:tty:bool`,
  EphemeralVolumeSource: `1:volumeClaimTemplate:PersistentVolumeClaimTemplate`,
  Event: `1:metadata:ObjectMeta 2:involvedObject:ObjectReference 3:reason:string 4:message:string
    5:source:EventSource 6:firstTimestamp:Time 7:lastTimestamp:Time 8:count:int32 9:type:string
    10:eventTime:MicroTime 11:series:EventSeries 12:action:string 13:related:ObjectReference
    14:reportingComponent:!string 15:reportingInstance:!string`,
  EventSeries: `1:count:int32 2:lastObservedTime:MicroTime`,
  EventSource: `1:component:string 2:host:string`,
  ExecAction: `1:command:[]string`,
  FCVolumeSource: `1:targetWWNs:[]string 2:lun:?int32 3:fsType:string 4:readOnly:bool 5:wwids:[]string`,
  FileKeySelector: `1:volumeName:!string 2:path:!string 3:key:!string 4:optional:?bool`,
  FlexVolumeSource: `1:driver:!string 2:fsType:string 3:secretRef:LocalObjectReference 4:readOnly:bool
    5:options:map:string`,
  FlockerVolumeSource: `1:datasetName:string 2:datasetUUID:string`,
  GCEPersistentDiskVolumeSource: `1:pdName:!string 2:fsType:string 3:partition:int32 4:readOnly:bool`,
  GitRepoVolumeSource: `1:repository:!string 2:revision:string 3:directory:string`,
  GlusterfsVolumeSource: `1:endpoints:!string 2:path:!string 3:readOnly:bool`,
  GRPCAction: `1:port:!int32 2:service:?string`,
  HostAlias: `1:ip:!string 2:hostnames:[]string`,
  HostIP: `1:ip:!string`,
  HostPathVolumeSource: `1:path:!string 2:type:?string`,
  HTTPGetAction: `1:path:string 2:port:IntOrString 3:host:string 4:scheme:string 5:httpHeaders:[]HTTPHeader`,
  HTTPHeader: `1:name:!string 2:value:!string`,
  ImageVolumeSource: `1:reference:string 2:pullPolicy:string`,
  ImageVolumeStatus: `1:imageRef:string`,
  ISCSIVolumeSource: `1:targetPortal:!string 2:iqn:!string 3:lun:!int32 4:iscsiInterface:string 5:fsType:string
    6:readOnly:bool 7:portals:[]string 8:chapAuthDiscovery:bool 11:chapAuthSession:bool
    10:secretRef:LocalObjectReference 12:initiatorName:?string`,
  KeyToPath: `1:key:!string 2:path:!string 3:mode:?int32`,
  Lifecycle: `1:postStart:LifecycleHandler 2:preStop:LifecycleHandler 3:stopSignal:?string`,
  LifecycleHandler: `1:exec:ExecAction 2:httpGet:HTTPGetAction 3:tcpSocket:TCPSocketAction 4:sleep:SleepAction`,
  LinuxContainerUser: `1:uid:!int64 2:gid:!int64 3:supplementalGroups:[]int64`,
  LoadBalancerIngress: `1:ip:string 2:hostname:string 3:ipMode:?string 4:ports:[]PortStatus`,
  LoadBalancerStatus: `1:ingress:[]LoadBalancerIngress`,
  LocalObjectReference: `1:name:string`,
  Namespace: `1:metadata:ObjectMeta 2:spec:NamespaceSpec 3:status:NamespaceStatus`,
  NamespaceCondition: `1:type:!string 2:status:!string 4:lastTransitionTime:Time 5:reason:string 6:message:string`,
  NamespaceSpec: `1:finalizers:[]string`,
  NamespaceStatus: `1:phase:string 2:conditions:[]NamespaceCondition`,
  NFSVolumeSource: `1:server:!string 2:path:!string 3:readOnly:bool`,
  NodeAffinity: `1:requiredDuringSchedulingIgnoredDuringExecution:NodeSelector
    2:preferredDuringSchedulingIgnoredDuringExecution:[]PreferredSchedulingTerm`,
  NodeAllocatableResourceClaimStatus: `1:resourceClaimName:!string 2:containers:[]string 3:resources:map:Quantity`,
  NodeSelector: `1:nodeSelectorTerms:[]NodeSelectorTerm`,
  NodeSelectorRequirement: `1:key:!string 2:operator:!string 3:values:[]string`,
  NodeSelectorTerm: `1:matchExpressions:[]NodeSelectorRequirement 2:matchFields:[]NodeSelectorRequirement`,
  ObjectFieldSelector: `1:apiVersion:string 2:fieldPath:!string`,
  ObjectReference: `1:kind:string 2:namespace:string 3:name:string 4:uid:string 5:apiVersion:string
    6:resourceVersion:string 7:fieldPath:string`,
  PersistentVolumeClaimSpec: `1:accessModes:[]string 4:selector:LabelSelector 2:resources:VolumeResourceRequirements
    3:volumeName:string 5:storageClassName:?string 6:volumeMode:?string 7:dataSource:TypedLocalObjectReference
    8:dataSourceRef:TypedObjectReference 9:volumeAttributesClassName:?string`,
  PersistentVolumeClaimTemplate: `1:metadata:ObjectMeta 2:spec:PersistentVolumeClaimSpec`,
  PersistentVolumeClaimVolumeSource: `1:claimName:!string 2:readOnly:bool`,
  PhotonPersistentDiskVolumeSource: `1:pdID:!string 2:fsType:string`,
  Pod: `1:metadata:ObjectMeta 2:spec:PodSpec 3:status:PodStatus`,
  PodAffinity: `1:requiredDuringSchedulingIgnoredDuringExecution:[]PodAffinityTerm
    2:preferredDuringSchedulingIgnoredDuringExecution:[]WeightedPodAffinityTerm`,
  PodAffinityTerm: `1:labelSelector:LabelSelector 2:namespaces:[]string 3:topologyKey:!string
    4:namespaceSelector:LabelSelector 5:matchLabelKeys:[]string 6:mismatchLabelKeys:[]string`,
  PodAntiAffinity: `1:requiredDuringSchedulingIgnoredDuringExecution:[]PodAffinityTerm
    2:preferredDuringSchedulingIgnoredDuringExecution:[]WeightedPodAffinityTerm`,
  PodCertificateProjection: `1:signerName:string 2:keyType:string 3:maxExpirationSeconds:?int32
    4:credentialBundlePath:string 5:keyPath:string 6:certificateChainPath:string 7:userAnnotations:map:string`,
  PodCondition: `1:type:!string 7:observedGeneration:int64 2:status:!string 3:lastProbeTime:Time
    4:lastTransitionTime:Time 5:reason:string 6:message:string`,
  PodDNSConfig: `1:nameservers:[]string 2:searches:[]string 3:options:[]PodDNSConfigOption`,
  PodDNSConfigOption: `1:name:string 2:value:?string`,
  PodExtendedResourceClaimStatus: `1:requestMappings:[]ContainerExtendedResourceRequest 2:resourceClaimName:!string`,
  PodIP: `1:ip:!string`,
  PodOS: `1:name:!string`,
  PodReadinessGate: `1:conditionType:!string`,
  PodResourceClaim: `1:name:!string 3:resourceClaimName:?string 4:resourceClaimTemplateName:?string`,
  PodResourceClaimStatus: `1:name:!string 2:resourceClaimName:?string`,
  PodSchedulingGate: `1:name:!string`,
  PodSchedulingGroup: `1:podGroupName:?string`,
  PodSecurityContext: `1:seLinuxOptions:SELinuxOptions 8:windowsOptions:WindowsSecurityContextOptions
    2:runAsUser:?int64 6:runAsGroup:?int64 3:runAsNonRoot:?bool 4:supplementalGroups:[]int64
    12:supplementalGroupsPolicy:?string 5:fsGroup:?int64 7:sysctls:[]Sysctl 9:fsGroupChangePolicy:?string
    10:seccompProfile:SeccompProfile 11:appArmorProfile:AppArmorProfile 13:seLinuxChangePolicy:?string`,
  PodSpec: `1:volumes:[]Volume 20:initContainers:[]Container 2:containers:[]Container
    34:ephemeralContainers:[]EphemeralContainer 3:restartPolicy:string 4:terminationGracePeriodSeconds:?int64
    5:activeDeadlineSeconds:?int64 6:dnsPolicy:string 7:nodeSelector:map:string 8:serviceAccountName:string
    9:serviceAccount:string 21:automountServiceAccountToken:?bool 10:nodeName:string 11:hostNetwork:bool
    12:hostPID:bool 13:hostIPC:bool 27:shareProcessNamespace:?bool 14:securityContext:PodSecurityContext
    15:imagePullSecrets:[]LocalObjectReference 16:hostname:string 17:subdomain:string 18:affinity:Affinity
    19:schedulerName:string 22:tolerations:[]Toleration 23:hostAliases:[]HostAlias 24:priorityClassName:string
    25:priority:?int32 26:dnsConfig:PodDNSConfig 28:readinessGates:[]PodReadinessGate 29:runtimeClassName:?string
    30:enableServiceLinks:?bool 31:preemptionPolicy:?string 32:overhead:map:Quantity
    33:topologySpreadConstraints:[]TopologySpreadConstraint 35:setHostnameAsFQDN:?bool 36:os:PodOS
    37:hostUsers:?bool 38:schedulingGates:[]PodSchedulingGate 39:resourceClaims:[]PodResourceClaim
    40:resources:ResourceRequirements 41:hostnameOverride:?string 43:schedulingGroup:PodSchedulingGroup`,
  PodStatus: `17:observedGeneration:int64 1:phase:string 2:conditions:[]PodCondition 3:message:string
    4:reason:string 11:nominatedNodeName:string 5:hostIP:string 16:hostIPs:[]HostIP 6:podIP:string 12:podIPs:[]PodIP
    7:startTime:Time 10:initContainerStatuses:[]ContainerStatus 8:containerStatuses:[]ContainerStatus
    9:qosClass:string 13:ephemeralContainerStatuses:[]ContainerStatus 14:resize:string
    15:resourceClaimStatuses:[]PodResourceClaimStatus 18:extendedResourceClaimStatus:PodExtendedResourceClaimStatus
    19:allocatedResources:map:Quantity 20:resources:ResourceRequirements
    21:nodeAllocatableResourceClaimStatuses:[]NodeAllocatableResourceClaimStatus`,
  PodTemplateSpec: `1:metadata:ObjectMeta 2:spec:PodSpec`,
  PortStatus: `1:port:!int32 2:protocol:!string 3:error:?string`,
  PortworxVolumeSource: `1:volumeID:!string 2:fsType:string 3:readOnly:bool`,
  PreferredSchedulingTerm: `1:weight:!int32 2:preference:NodeSelectorTerm`,
  Probe: `1:...:ProbeHandler 2:initialDelaySeconds:int32 3:timeoutSeconds:int32 4:periodSeconds:int32
    5:successThreshold:int32 6:failureThreshold:int32 7:terminationGracePeriodSeconds:?int64`,
  ProbeHandler: `1:exec:ExecAction 2:httpGet:HTTPGetAction 3:tcpSocket:TCPSocketAction 4:grpc:GRPCAction`,
  ProjectedVolumeSource: `1:sources:[]VolumeProjection 2:defaultMode:?int32`,
  QuobyteVolumeSource: `1:registry:!string 2:volume:!string 3:readOnly:bool 4:user:string 5:group:string
    6:tenant:string`,
  RBDVolumeSource: `1:monitors:[]string 2:image:!string 3:fsType:string 4:pool:string 5:user:string 6:keyring:string
    7:secretRef:LocalObjectReference 8:readOnly:bool`,
  ResourceClaim: `1:name:!string 2:request:string`,
  ResourceFieldSelector: `1:containerName:string 2:resource:!string 3:divisor:Quantity`,
  ResourceHealth: `1:resourceID:!string 2:health:string 6:message:?string`,
  ResourceQuota: `1:metadata:ObjectMeta 2:spec:ResourceQuotaSpec 3:status:ResourceQuotaStatus`,
  ResourceQuotaSpec: `1:hard:map:Quantity 2:scopes:[]string 3:scopeSelector:ScopeSelector`,
  ResourceQuotaStatus: `1:hard:map:Quantity 2:used:map:Quantity`,
  ResourceRequirements: `1:limits:map:Quantity 2:requests:map:Quantity 3:claims:[]ResourceClaim`,
  ResourceStatus: `1:name:!string 2:resources:[]ResourceHealth`,
  ScaleIOVolumeSource: `1:gateway:!string 2:system:!string 3:secretRef:LocalObjectReference 4:sslEnabled:bool
    5:protectionDomain:string 6:storagePool:string 7:storageMode:string 8:volumeName:string 9:fsType:string
    10:readOnly:bool`,
  ScopedResourceSelectorRequirement: `1:scopeName:!string 2:operator:!string 3:values:[]string`,
  ScopeSelector: `1:matchExpressions:[]ScopedResourceSelectorRequirement`,
  SeccompProfile: `1:type:!string 2:localhostProfile:?string`,
  Secret: `1:metadata:ObjectMeta 5:immutable:?bool 2:data:map:bytes 4:stringData:map:string 3:type:string`,
  SecretEnvSource: `1:...:LocalObjectReference 2:optional:?bool`,
  SecretKeySelector: `1:...:LocalObjectReference 2:key:!string 3:optional:?bool`,
  SecretProjection: `1:...:LocalObjectReference 2:items:[]KeyToPath 4:optional:?bool`,
  SecretVolumeSource: `1:secretName:string 2:items:[]KeyToPath 3:defaultMode:?int32 4:optional:?bool`,
  SecurityContext: `1:capabilities:Capabilities 2:privileged:?bool 3:seLinuxOptions:SELinuxOptions
    10:windowsOptions:WindowsSecurityContextOptions 4:runAsUser:?int64 8:runAsGroup:?int64 5:runAsNonRoot:?bool
    6:readOnlyRootFilesystem:?bool 7:allowPrivilegeEscalation:?bool 9:procMount:?string
    11:seccompProfile:SeccompProfile 12:appArmorProfile:AppArmorProfile`,
  SELinuxOptions: `1:user:string 2:role:string 3:type:string 4:level:string`,
  Service: `1:metadata:ObjectMeta 2:spec:ServiceSpec 3:status:ServiceStatus`,
  ServiceAccount: `1:metadata:ObjectMeta 2:secrets:[]ObjectReference 3:imagePullSecrets:[]LocalObjectReference
    4:automountServiceAccountToken:?bool`,
  ServiceAccountTokenProjection: `1:audience:string 2:expirationSeconds:?int64 3:path:!string`,
  ServicePort: `1:name:string 2:protocol:string 6:appProtocol:?string 3:port:!int32 4:targetPort:IntOrString
    5:nodePort:int32`,
  ServiceSpec: `1:ports:[]ServicePort 2:selector:map:string 3:clusterIP:string 18:clusterIPs:[]string 4:type:string
    5:externalIPs:[]string 7:sessionAffinity:string 8:loadBalancerIP:string 9:loadBalancerSourceRanges:[]string
    10:externalName:string 11:externalTrafficPolicy:string 12:healthCheckNodePort:int32
    13:publishNotReadyAddresses:bool 14:sessionAffinityConfig:SessionAffinityConfig 19:ipFamilies:[]string
    17:ipFamilyPolicy:?string 20:allocateLoadBalancerNodePorts:?bool 21:loadBalancerClass:?string
    22:internalTrafficPolicy:?string 23:trafficDistribution:?string`,
  ServiceStatus: `1:loadBalancer:LoadBalancerStatus 2:conditions:[]Condition`,
  SessionAffinityConfig: `1:clientIP:ClientIPConfig`,
  SleepAction: `1:seconds:!int64`,
  StorageOSVolumeSource: `1:volumeName:string 2:volumeNamespace:string 3:fsType:string 4:readOnly:bool
    5:secretRef:LocalObjectReference`,
  Sysctl: `1:name:!string 2:value:!string`,
  TCPSocketAction: `1:port:IntOrString 2:host:string`,
  Toleration: `1:key:string 2:operator:string 3:value:string 4:effect:string 5:tolerationSeconds:?int64`,
  TopologySpreadConstraint: `1:maxSkew:!int32 2:topologyKey:!string 3:whenUnsatisfiable:!string
    4:labelSelector:LabelSelector 5:minDomains:?int32 6:nodeAffinityPolicy:?string 7:nodeTaintsPolicy:?string
    8:matchLabelKeys:[]string`,
  TypedLocalObjectReference: `1:apiGroup:?string 2:kind:!string 3:name:!string`,
  TypedObjectReference: `1:apiGroup:?string 2:kind:!string 3:name:!string 4:namespace:?string`,
  Volume: `1:name:!string 2:...:VolumeSource`,
  VolumeDevice: `1:name:!string 2:devicePath:!string`,
  VolumeMount: `1:name:!string 2:readOnly:bool 7:recursiveReadOnly:?string 3:mountPath:!string 4:subPath:string
    5:mountPropagation:?string 6:subPathExpr:string`,
  VolumeMountStatus: `1:name:!string 2:mountPath:!string 3:readOnly:bool 4:recursiveReadOnly:?string
    5:volumeStatus:VolumeStatus`,
  VolumeProjection: `1:secret:SecretProjection 2:downwardAPI:DownwardAPIProjection 3:configMap:ConfigMapProjection
    4:serviceAccountToken:ServiceAccountTokenProjection 5:clusterTrustBundle:ClusterTrustBundleProjection
    6:podCertificate:PodCertificateProjection`,
  VolumeResourceRequirements: `1:limits:map:Quantity 2:requests:map:Quantity`,
  VolumeSource: `1:hostPath:HostPathVolumeSource 2:emptyDir:EmptyDirVolumeSource
    3:gcePersistentDisk:GCEPersistentDiskVolumeSource 4:awsElasticBlockStore:AWSElasticBlockStoreVolumeSource
    5:gitRepo:GitRepoVolumeSource 6:secret:SecretVolumeSource 7:nfs:NFSVolumeSource 8:iscsi:ISCSIVolumeSource
    9:glusterfs:GlusterfsVolumeSource 10:persistentVolumeClaim:PersistentVolumeClaimVolumeSource
    11:rbd:RBDVolumeSource 12:flexVolume:FlexVolumeSource 13:cinder:CinderVolumeSource 14:cephfs:CephFSVolumeSource
    15:flocker:FlockerVolumeSource 16:downwardAPI:DownwardAPIVolumeSource 17:fc:FCVolumeSource
    18:azureFile:AzureFileVolumeSource 19:configMap:ConfigMapVolumeSource
    20:vsphereVolume:VsphereVirtualDiskVolumeSource 21:quobyte:QuobyteVolumeSource
    22:azureDisk:AzureDiskVolumeSource 23:photonPersistentDisk:PhotonPersistentDiskVolumeSource
    26:projected:ProjectedVolumeSource 24:portworxVolume:PortworxVolumeSource 25:scaleIO:ScaleIOVolumeSource
    27:storageos:StorageOSVolumeSource 28:csi:CSIVolumeSource 29:ephemeral:EphemeralVolumeSource
    30:image:ImageVolumeSource`,
  VolumeStatus: `1:image:ImageVolumeStatus`,
  VsphereVirtualDiskVolumeSource: `1:volumePath:!string 2:fsType:string 3:storagePolicyName:string
    4:storagePolicyID:string`,
  WeightedPodAffinityTerm: `1:weight:!int32 2:podAffinityTerm:PodAffinityTerm`,
  WindowsSecurityContextOptions: `1:gmsaCredentialSpecName:?string 2:gmsaCredentialSpec:?string
    3:runAsUserName:?string 4:hostProcess:?bool`,
};
