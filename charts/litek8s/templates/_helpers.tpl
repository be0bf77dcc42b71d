{{/*
Names. The StatefulSet, its Pods and the client Service are <fullname>;
the headless Service that gives each member its DNS name is
<fullname>-peers.
*/}}
{{- define "litek8s.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "litek8s.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The headless Service: members' stable DNS names, not-ready ones included. */}}
{{- define "litek8s.peersService" -}}
{{- printf "%s-peers" (include "litek8s.fullname" .) }}
{{- end }}

{{- define "litek8s.leaderService" -}}
{{- printf "%s-leader" (include "litek8s.fullname" .) }}
{{- end }}

{{- define "litek8s.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "litek8s.selectorLabels" -}}
app.kubernetes.io/name: {{ include "litek8s.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "litek8s.labels" -}}
helm.sh/chart: {{ include "litek8s.chart" . }}
{{ include "litek8s.selectorLabels" . }}
app.kubernetes.io/version: {{ include "litek8s.imageTag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: litek8s
{{- end }}

{{- define "litek8s.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "litek8s.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding admin-token and join-token. */}}
{{- define "litek8s.secretName" -}}
{{- default (printf "%s-tokens" (include "litek8s.fullname" .)) .Values.auth.existingSecret }}
{{- end }}

{{- define "litek8s.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}
{{- end }}

{{/* Whether members call the Kubernetes API they run in (service account token, RBAC). */}}
{{- define "litek8s.usesKubernetesAPI" -}}
{{- if or .Values.leaderService.enabled .Values.kubernetesAPI.peerPodIPs .Values.kubernetesAPI.removeScaledDownMembers }}true{{ end }}
{{- end }}

{{- define "litek8s.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "litek8s.imageTag" .) }}
{{- end }}

{{/* The cluster-local DNS suffix of this release's Services. */}}
{{- define "litek8s.svcDomain" -}}
{{- printf "%s.svc.%s" .Release.Namespace .Values.clusterDomain }}
{{- end }}

{{/* Member i's stable DNS name: <pod>.<peers service>.<namespace>.svc.<domain>. */}}
{{- define "litek8s.memberHost" -}}
{{- printf "%s-%d.%s.%s" (include "litek8s.fullname" .root) (int .ordinal) (include "litek8s.peersService" .root) (include "litek8s.svcDomain" .root) }}
{{- end }}

{{/* The client Service's URL, as clients in the cluster reach it. */}}
{{- define "litek8s.clientURL" -}}
{{- printf "https://%s.%s:%d" (include "litek8s.fullname" .) (include "litek8s.svcDomain" .) (int .Values.service.port) }}
{{- end }}

{{/*
The node settings every member shares that do not depend on the number of
members. The StatefulSet's checksum/config annotation covers exactly
these: changing them rolls the members; scaling does not.
*/}}
{{- define "litek8s.settings" -}}
data-dir: {{ .Values.dataDir }}
api-addr: {{ printf "0.0.0.0:%d" (int .Values.ports.api) | quote }}
raft-addr: {{ printf "0.0.0.0:%d" (int .Values.ports.raft) | quote }}
{{- if .Values.metrics.enabled }}
metrics-addr: {{ printf "0.0.0.0:%d" (int .Values.ports.metrics) | quote }}
{{- end }}
log-level: {{ .Values.logLevel }}
simulated-nodes: {{ int .Values.simulatedNodes }}
{{- if .Values.leaderService.enabled }}
leader-label: {{ .Values.leaderService.labelKey }}
{{- end }}
kubernetes-peers: {{ .Values.kubernetesAPI.peerPodIPs }}
remove-scaled-down-members: {{ .Values.kubernetesAPI.removeScaledDownMembers }}
dead-member-timeout: {{ .Values.autopilot.deadMemberTimeout | quote }}
min-quorum: {{ int .Values.autopilot.minQuorum }}
ca-cert-file: /etc/litek8s-secret/ca.crt
ca-key-file: /etc/litek8s-secret/ca.key
{{- if .Values.tls.existingSecret }}
tls-cert-file: /etc/litek8s-tls/tls.crt
tls-private-key-file: /etc/litek8s-tls/tls.key
tls-reload-interval: {{ .Values.tls.reloadInterval | quote }}
{{- end }}
{{- if not (kindIs "invalid" .Values.anonymousAuth) }}
anonymous-auth: {{ .Values.anonymousAuth }}
{{- end }}
{{- range $key, $flag := dict "maxRequestsInflight" "max-requests-inflight" "maxMutatingRequestsInflight" "max-mutating-requests-inflight" "maxWatchesInflight" "max-watches-inflight" "maxObjectSizeBytes" "max-object-size-bytes" }}
{{- $v := index ($.Values.limits | default dict) $key }}
{{- if not (kindIs "invalid" $v) }}
{{ $flag }}: {{ int64 $v }}
{{- end }}
{{- end }}
{{- range $key, $flag := dict "requestTimeout" "request-timeout" "minRequestTimeout" "min-request-timeout" }}
{{- with index ($.Values.limits | default dict) $key }}
{{ $flag }}: {{ . | quote }}
{{- end }}
{{- end }}
hostname:
{{- $fullname := include "litek8s.fullname" . }}
{{- $services := list $fullname }}
{{- if .Values.leaderService.enabled }}
{{- $services = append $services (include "litek8s.leaderService" .) }}
{{- end }}
{{- range $services }}
  - {{ . }}
  - {{ printf "%s.%s" . $.Release.Namespace }}
  - {{ printf "%s.%s.svc" . $.Release.Namespace }}
  - {{ printf "%s.%s" . (include "litek8s.svcDomain" $) }}
{{- end }}
{{- range .Values.extraHostnames }}
  - {{ . | quote }}
{{- end }}
{{- with .Values.config }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The pod anti-affinity term of antiAffinity.type. */}}
{{- define "litek8s.podAntiAffinity" -}}
{{- $term := dict "labelSelector" (dict "matchLabels" (include "litek8s.selectorLabels" . | fromYaml)) "topologyKey" .Values.antiAffinity.topologyKey }}
{{- if eq .Values.antiAffinity.type "required" }}
{{- dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term) | toYaml }}
{{- else if eq .Values.antiAffinity.type "preferred" }}
{{- dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term)) | toYaml }}
{{- end }}
{{- end }}

{{/* The probes' fixed parts (the member's own HTTPS endpoints) and their tunable timings. */}}
{{- define "litek8s.probe" -}}
httpGet:
  path: {{ .path }}
  port: api
  scheme: HTTPS
{{ toYaml .timing }}
{{- end }}

{{/*
The backup Job's Pod labels: not the members' selector labels, so that
no Service selects a backup Pod.
*/}}
{{- define "litek8s.backupSelectorLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: backup
app.kubernetes.io/part-of: litek8s
{{- end }}

{{/* The backup PVC's name: backup.persistence.existingClaim or <fullname>-backup. */}}
{{- define "litek8s.backupClaim" -}}
{{- default (printf "%s-backup" (include "litek8s.fullname" .)) .Values.backup.persistence.existingClaim }}
{{- end }}
