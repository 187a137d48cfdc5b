// Terraform for the providers' official Terraform providers: hashicorp/aws (aws_instance),
// hashicorp/google (google_compute_instance), hashicorp/azurerm (azurerm_linux_virtual_machine),
// aliyun/alicloud (alicloud_instance) and tencentcloudstack/tencentcloud (tencentcloud_instance).
// One instance per node (`count`), the spot variant where chosen, and the provider's GPU driver
// image or extension where the provider names one. What only the user knows (an SSH key, a
// project, a network) is a variable.
#include <fmt/format.h>

#include "export/export_internal.h"
#include "util/strings.h"

namespace cloudfit::export_internal {

namespace {

std::string RequiredProvider(const char* local, const char* source, const char* version) {
  return fmt::format(
      "terraform {{\n  required_version = \">= 1.3\"\n  required_providers {{\n    {} = {{\n"
      "      source  = \"{}\"\n      version = \"{}\"\n    }}\n  }}\n}}\n\n",
      local, source, version);
}

std::string Variable(const char* name, const char* type, const std::string& description,
                     const std::string& default_hcl = "") {
  std::string out = fmt::format("variable \"{}\" {{\n  description = {}\n  type        = {}\n", name,
                                HclString(description), type);
  if (!default_hcl.empty()) out += "  default     = " + default_hcl + "\n";
  return out + "}\n\n";
}

// The name of node i: "name-0", "name-1", ... (the name is a ResourceName: nothing to escape).
std::string NodeName(const ExportTarget& t) {
  return t.nodes > 1 ? "\"" + t.name + "-${count.index}\"" : HclString(t.name);
}

bool Spot(const ExportTarget& t) { return t.mode == PricingMode::kSpot; }

std::string Aws(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  std::string arch = type.arch == "arm64" ? "arm64" : "x86_64";
  std::string out = RequiredProvider("aws", "hashicorp/aws", ">= 5.0");
  out += fmt::format("provider \"aws\" {{\n  region = {}\n}}\n\n", HclString(RegionName(t)));
  out += Variable("key_name", "string", "An EC2 key pair for SSH; null for none", "null");
  out += Variable("subnet_id", "string", "A subnet to launch in; null for the default VPC's", "null");
  if (type.has_gpu()) {
    out += "# AWS Deep Learning Base AMI with the NVIDIA driver, CUDA and the NVIDIA container\n"
           "# toolkit, looked up through AWS's public SSM parameter (AWS DLAMI guide, \"Finding\n"
           "# the ID of a DLAMI\").\n";
    out += fmt::format(
        "data \"aws_ssm_parameter\" \"image\" {{\n  name = "
        "\"/aws/service/deeplearning/ami/{}/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id\"\n}}\n\n",
        arch);
  } else {
    out += "# Canonical's Ubuntu 22.04 image, through its public SSM parameter.\n";
    out += fmt::format(
        "data \"aws_ssm_parameter\" \"image\" {{\n  name = "
        "\"/aws/service/canonical/ubuntu/server/22.04/stable/current/{}/hvm/ebs-gp2/ami-id\"\n}}\n\n",
        arch == "arm64" ? "arm64" : "amd64");
  }
  if (t.nodes > 1) {
    out += "# Nodes of one job close together on the network (EFA needs a cluster placement group).\n";
    out += fmt::format("resource \"aws_placement_group\" \"nodes\" {{\n  name     = {}\n  strategy = \"cluster\"\n}}\n\n",
                       HclString(t.name));
  }
  out += "resource \"aws_instance\" \"node\" {\n";
  out += fmt::format("  count         = {}\n", t.nodes);
  out += "  ami           = data.aws_ssm_parameter.image.insecure_value\n";
  out += fmt::format("  instance_type = {}\n", HclString(type.name));
  out += "  key_name      = var.key_name\n  subnet_id     = var.subnet_id\n";
  if (t.nodes > 1) out += "  placement_group = aws_placement_group.nodes.id\n";
  out += fmt::format("\n  root_block_device {{\n    volume_size = {}\n    volume_type = \"gp3\"\n  }}\n", t.disk_gb);
  if (Spot(t)) {
    out += "\n  instance_market_options {\n    market_type = \"spot\"\n    spot_options {\n"
           "      instance_interruption_behavior = \"terminate\"\n"
           "      spot_instance_type             = \"one-time\"\n    }\n  }\n";
  }
  out += fmt::format("\n  tags = {{\n    Name = {}\n  }}\n}}\n\n", NodeName(t));
  out += "output \"public_ips\" {\n  value = aws_instance.node[*].public_ip\n}\n";
  return out;
}

std::string Gcp(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  std::string region = RegionName(t);
  std::string out = RequiredProvider("google", "hashicorp/google", ">= 5.0");
  out += Variable("project", "string", "The Google Cloud project to create the instances in");
  out += Variable("zone", "string",
                  "A zone of " + region + " that offers " +
                      (type.has_gpu() ? type.gpu_name() : type.name) + " (assumed: the -a zone)",
                  HclString(region + "-a"));
  if (type.has_gpu()) {
    out += Variable("image", "string",
                    "Boot image: Google's Deep Learning VM family with CUDA; the NVIDIA driver is "
                    "installed at first boot (metadata install-nvidia-driver)",
                    HclString("projects/deeplearning-platform-release/global/images/family/"
                              "common-cu124-ubuntu-2204-py310"));
  } else {
    out += Variable("image", "string", "Boot image", HclString("ubuntu-os-cloud/ubuntu-2204-lts"));
  }
  out += fmt::format("provider \"google\" {{\n  project = var.project\n  region  = {}\n}}\n\n",
                     HclString(region));
  out += "resource \"google_compute_instance\" \"node\" {\n";
  out += fmt::format("  count        = {}\n  name         = {}\n  machine_type = {}\n  zone         = var.zone\n",
                     t.nodes, NodeName(t), HclString(ProviderMachineType(type)));
  out += fmt::format("\n  boot_disk {{\n    initialize_params {{\n      image = var.image\n      size  = {}\n    }}\n  }}\n",
                     t.disk_gb);
  if (type.has_gpu() && !GcpGpusBundled(type)) {
    out += fmt::format("\n  guest_accelerator {{\n    type  = {}\n    count = {}\n  }}\n",
                       HclString(GcpAcceleratorType(type)), FormatNumberShort(type.gpu_count));
  }
  out += "\n  scheduling {\n";
  // VMs with GPUs cannot live-migrate: they must stop for host maintenance.
  std::string maintenance = type.has_gpu() || Spot(t) ? "TERMINATE" : "MIGRATE";
  if (Spot(t)) {
    out += "    on_host_maintenance         = \"" + maintenance + "\"\n";
    out += "    automatic_restart           = false\n    preemptible                 = true\n"
           "    provisioning_model          = \"SPOT\"\n    instance_termination_action = \"STOP\"\n";
  } else {
    out += "    on_host_maintenance = \"" + maintenance + "\"\n    automatic_restart   = true\n";
  }
  out += "  }\n";
  out += "\n  network_interface {\n    network = \"default\"\n    access_config {}\n  }\n";
  if (type.has_gpu()) out += "\n  metadata = {\n    install-nvidia-driver = \"True\"\n  }\n";
  out += "}\n\n";
  out += "output \"public_ips\" {\n"
         "  value = google_compute_instance.node[*].network_interface[0].access_config[0].nat_ip\n}\n";
  return out;
}

std::string Azure(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  std::string out = RequiredProvider("azurerm", "hashicorp/azurerm", ">= 3.0");
  out += "provider \"azurerm\" {\n  features {}\n}\n\n";
  out += Variable("admin_username", "string", "The Linux administrator", HclString("azureuser"));
  out += Variable("admin_ssh_public_key", "string", "An SSH public key (the text of id_ed25519.pub)");
  out += fmt::format("resource \"azurerm_resource_group\" \"main\" {{\n  name     = {}\n  location = {}\n}}\n\n",
                     HclString(t.name), HclString(RegionName(t)));
  out += fmt::format(
      "resource \"azurerm_virtual_network\" \"main\" {{\n  name                = {}\n"
      "  address_space       = [\"10.0.0.0/16\"]\n"
      "  location            = azurerm_resource_group.main.location\n"
      "  resource_group_name = azurerm_resource_group.main.name\n}}\n\n",
      HclString(t.name + "-net"));
  out += fmt::format(
      "resource \"azurerm_subnet\" \"main\" {{\n  name                 = {}\n"
      "  resource_group_name  = azurerm_resource_group.main.name\n"
      "  virtual_network_name = azurerm_virtual_network.main.name\n"
      "  address_prefixes     = [\"10.0.1.0/24\"]\n}}\n\n",
      HclString(t.name + "-subnet"));
  out += fmt::format(
      "resource \"azurerm_public_ip\" \"node\" {{\n  count               = {}\n  name                = \"{}-ip-${{count.index}}\"\n"
      "  location            = azurerm_resource_group.main.location\n"
      "  resource_group_name = azurerm_resource_group.main.name\n"
      "  allocation_method   = \"Static\"\n  sku                 = \"Standard\"\n}}\n\n",
      t.nodes, t.name);
  out += fmt::format(
      "resource \"azurerm_network_interface\" \"node\" {{\n  count               = {}\n  name                = \"{}-nic-${{count.index}}\"\n"
      "  location            = azurerm_resource_group.main.location\n"
      "  resource_group_name = azurerm_resource_group.main.name\n\n"
      "  ip_configuration {{\n    name                          = \"internal\"\n"
      "    subnet_id                     = azurerm_subnet.main.id\n"
      "    private_ip_address_allocation = \"Dynamic\"\n"
      "    public_ip_address_id          = azurerm_public_ip.node[count.index].id\n  }}\n}}\n\n",
      t.nodes, t.name);
  out += "resource \"azurerm_linux_virtual_machine\" \"node\" {\n";
  out += fmt::format("  count                 = {}\n  name                  = \"{}-${{count.index}}\"\n", t.nodes, t.name);
  out += "  resource_group_name   = azurerm_resource_group.main.name\n"
         "  location              = azurerm_resource_group.main.location\n";
  out += fmt::format("  size                  = {}\n", HclString(type.name));
  out += "  admin_username        = var.admin_username\n"
         "  network_interface_ids = [azurerm_network_interface.node[count.index].id]\n";
  if (Spot(t)) {
    out += "  # Spot: evicted when Azure needs the capacity back; -1 pays up to the on-demand price.\n"
           "  priority        = \"Spot\"\n  eviction_policy = \"Delete\"\n  max_bid_price   = -1\n";
  }
  out += "\n  admin_ssh_key {\n    username   = var.admin_username\n    public_key = var.admin_ssh_public_key\n  }\n";
  out += fmt::format("\n  os_disk {{\n    caching              = \"ReadWrite\"\n"
                     "    storage_account_type = \"Premium_LRS\"\n    disk_size_gb         = {}\n  }}\n",
                     t.disk_gb);
  out += "\n  source_image_reference {\n    publisher = \"Canonical\"\n"
         "    offer     = \"0001-com-ubuntu-server-jammy\"\n    sku       = \"22_04-lts-gen2\"\n"
         "    version   = \"latest\"\n  }\n}\n\n";
  if (type.has_gpu()) {
    out += "# Azure's NVIDIA GPU Driver Extension installs the driver (and CUDA) on the VM.\n";
    out += fmt::format(
        "resource \"azurerm_virtual_machine_extension\" \"nvidia_driver\" {{\n  count                      = {}\n"
        "  name                       = \"NvidiaGpuDriverLinux\"\n"
        "  virtual_machine_id         = azurerm_linux_virtual_machine.node[count.index].id\n"
        "  publisher                  = \"Microsoft.HpcCompute\"\n"
        "  type                       = \"NvidiaGpuDriverLinux\"\n"
        "  type_handler_version       = \"1.9\"\n"
        "  auto_upgrade_minor_version = true\n}}\n\n",
        t.nodes);
  }
  out += "output \"public_ips\" {\n  value = azurerm_public_ip.node[*].ip_address\n}\n";
  return out;
}

std::string Alibaba(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  std::string out = RequiredProvider("alicloud", "aliyun/alicloud", ">= 1.200.0");
  out += fmt::format("provider \"alicloud\" {{\n  region = {}\n}}\n\n", HclString(RegionName(t)));
  out += Variable("vswitch_id", "string",
                  "A vSwitch (it fixes the zone) in a zone of " + RegionName(t) + " that offers " + type.name);
  out += Variable("security_group_id", "string", "A security group of the vSwitch's VPC");
  out += Variable("key_name", "string", "An ECS key pair for SSH; null for none", "null");
  out += "# Alibaba's public Ubuntu 22.04 image. It carries no NVIDIA driver: install it in your\n"
         "# setup, or pick a GPU image from Alibaba Cloud Marketplace.\n";
  out += "data \"alicloud_images\" \"ubuntu\" {\n  owners      = \"system\"\n"
         "  name_regex  = \"^ubuntu_22_04_x64\"\n  most_recent = true\n}\n\n";
  out += "resource \"alicloud_instance\" \"node\" {\n";
  out += fmt::format("  count                = {}\n  instance_name        = {}\n  instance_type        = {}\n",
                     t.nodes, NodeName(t), HclString(type.name));
  out += "  image_id             = data.alicloud_images.ubuntu.images[0].id\n"
         "  vswitch_id           = var.vswitch_id\n  security_groups      = [var.security_group_id]\n"
         "  key_name             = var.key_name\n  system_disk_category = \"cloud_essd\"\n";
  out += fmt::format("  system_disk_size     = {}\n", t.disk_gb);
  out += "  instance_charge_type = \"PostPaid\"\n";
  out += std::string("  spot_strategy        = \"") + (Spot(t) ? "SpotAsPriceGo" : "NoSpot") + "\"\n";
  out += "}\n\n";
  out += "output \"private_ips\" {\n  value = alicloud_instance.node[*].private_ip\n}\n";
  return out;
}

std::string Tencent(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  std::string out = RequiredProvider("tencentcloud", "tencentcloudstack/tencentcloud", ">= 1.81.0");
  out += fmt::format("provider \"tencentcloud\" {{\n  region = {}\n}}\n\n", HclString(RegionName(t)));
  out += Variable("availability_zone", "string",
                  "A zone of " + RegionName(t) + " that offers " + type.name + ", e.g. " + RegionName(t) + "-3");
  out += Variable("vpc_id", "string", "A VPC in the region");
  out += Variable("subnet_id", "string", "A subnet of the VPC in the zone");
  out += Variable("key_ids", "list(string)", "SSH key ids; empty for none", "[]");
  out += "# Tencent's public Ubuntu 22.04 image. It carries no NVIDIA driver: install it in your\n"
         "# setup, or choose a GPU image with the driver in the console.\n";
  out += "data \"tencentcloud_images\" \"ubuntu\" {\n  image_type       = [\"PUBLIC_IMAGE\"]\n"
         "  image_name_regex = \"Ubuntu Server 22.04\"\n}\n\n";
  out += "resource \"tencentcloud_instance\" \"node\" {\n";
  out += fmt::format("  count                      = {}\n  instance_name              = {}\n"
                     "  instance_type              = {}\n",
                     t.nodes, NodeName(t), HclString(type.name));
  out += "  availability_zone          = var.availability_zone\n"
         "  image_id                   = data.tencentcloud_images.ubuntu.images[0].image_id\n"
         "  vpc_id                     = var.vpc_id\n  subnet_id                  = var.subnet_id\n"
         "  key_ids                    = var.key_ids\n  system_disk_type           = \"CLOUD_PREMIUM\"\n";
  out += fmt::format("  system_disk_size           = {}\n", t.disk_gb);
  out += "  allocate_public_ip         = true\n  internet_max_bandwidth_out = 100\n";
  if (Spot(t)) {
    out += "  instance_charge_type       = \"SPOTPAID\"\n  spot_instance_type         = \"ONE-TIME\"\n";
  } else {
    out += "  instance_charge_type       = \"POSTPAID_BY_HOUR\"\n";
  }
  out += "}\n\n";
  out += "output \"public_ips\" {\n  value = tencentcloud_instance.node[*].public_ip\n}\n";
  return out;
}

}  // namespace

Status WriteTerraform(const ExportTarget& t, std::string* out) {
  const std::string& p = t.instance->provider;
  std::string body;
  if (p == "aws") body = Aws(t);
  else if (p == "gcp") body = Gcp(t);
  else if (p == "azure") body = Azure(t);
  else if (p == "alibaba") body = Alibaba(t);
  else if (p == "tencent") body = Tencent(t);
  else {
    return Status::InvalidArgument(
        "--format terraform: '" + p +
        "' has no official Terraform provider; Terraform export covers aws, gcp, azure, alibaba "
        "and tencent (SkyPilot launches Lambda: --format skypilot)");
  }
  if (t.mode == PricingMode::kReserved1y || t.mode == PricingMode::kReserved3y) {
    body = "# Reserved pricing is a billing commitment bought separately (a reservation or savings\n"
           "# plan); the instances below are ordinary on-demand instances it applies to.\n\n" +
           body;
  }
  *out = CommentHeader(t) + body;
  return Status::OK();
}

}  // namespace cloudfit::export_internal
